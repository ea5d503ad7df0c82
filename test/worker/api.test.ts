import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createApi, LeaseLostError, type OnRetry, RefusedError } from '../../worker/api.js'

// A real HTTP server on loopback that answers from a script of responses, one per request.
type Answer = { status: number; body?: unknown } | 'drop'
let server: Server | undefined
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())))

async function serve(answers: Answer[], onRetry?: OnRetry) {
  const seen: { method?: string; url?: string; auth?: string; body: unknown }[] = []
  server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let text = ''
    for await (const chunk of req) text += chunk
    seen.push({
      method: req.method,
      url: req.url,
      auth: req.headers.authorization,
      body: JSON.parse(text || 'null'),
    })
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)] ?? { status: 500 }
    if (answer === 'drop') return req.socket.destroy()
    res.writeHead(answer.status, { 'content-type': 'application/json' })
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body))
  })
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const api = createApi({
    url: `http://127.0.0.1:${port}`,
    token: 'worker-token',
    retry: { budgetMs: 5_000, baseMs: 5, maxDelayMs: 20 },
    ...(onRetry ? { onRetry } : {}),
  })
  return { api, seen }
}

const fence = { id: '00000000-0000-4000-8000-000000000001', attempt: 2, leaseToken: 'lease' }
const completion = { exitCode: 0, durationMs: 5 }

describe('coordinator client', () => {
  it('sends the bearer token and the fence with every write', async () => {
    const { api, seen } = await serve([{ status: 200, body: { id: fence.id, status: 'succeeded' } }])
    await api.complete(fence, completion)
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: `/v1/dispatches/${fence.id}/complete`,
      auth: 'Bearer worker-token',
      body: { attempt: 2, leaseToken: 'lease', exitCode: 0, durationMs: 5 },
    })
  })

  it('retries 5xx answers and dropped connections with the same body until one succeeds', async () => {
    const ok = { status: 200, body: { id: fence.id, status: 'succeeded' } }
    const { api, seen } = await serve([{ status: 503 }, 'drop', { status: 502 }, ok])
    expect(await api.complete(fence, completion)).toEqual(ok.body)
    expect(seen).toHaveLength(4)
    expect(new Set(seen.map((s) => JSON.stringify(s.body))).size).toBe(1)
  })

  it('tells each retry which call, how many tries failed, and the dispatch and step the write is for', async () => {
    const retries: unknown[][] = []
    const { api } = await serve(
      [{ status: 503 }, { status: 200, body: {} }, { status: 503 }, { status: 200 }],
      (...args) => retries.push(args),
    )
    await api.event(fence, 'baseline')
    await api.report(fence, { outcome: 'met', declared: false, results: [], startedAt: 'x', finishedAt: 'x' })
    expect(retries.map(([what, failures, , about]) => [what, failures, about])).toEqual([
      [`POST /v1/dispatches/${fence.id}/events`, 1, { dispatchId: fence.id, attempt: 2, step: 'baseline' }],
      [`PUT /v1/dispatches/${fence.id}/preflight`, 1, { dispatchId: fence.id, attempt: 2, step: 'report' }],
    ])
  })

  it('stops at once with LeaseLostError on 409', async () => {
    const { api, seen } = await serve([
      { status: 409, body: { error: { code: 'lease-lost', message: 'gone' } } },
    ])
    await expect(api.complete(fence, completion)).rejects.toBeInstanceOf(LeaseLostError)
    expect(seen).toHaveLength(1)
  })

  it('does not retry other 4xx answers and keeps their code', async () => {
    const { api, seen } = await serve([
      { status: 400, body: { error: { code: 'invalid-request', message: 'no' } } },
    ])
    await expect(api.complete(fence, completion)).rejects.toMatchObject({ code: 'invalid-request' })
    await expect(api.complete(fence, completion)).rejects.toBeInstanceOf(RefusedError)
    expect(seen).toHaveLength(2)
  })

  it('gives up once the retry budget is spent', async () => {
    const { seen } = await serve([{ status: 503 }])
    const address = server?.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const api = createApi({
      url: `http://127.0.0.1:${port}`,
      token: 't',
      retry: { budgetMs: 100, baseMs: 5, maxDelayMs: 20 },
    })
    await expect(api.complete(fence, completion)).rejects.toThrow(/503/)
    expect(seen.length).toBeGreaterThan(1)
  })

  it('reads 204 from a claim as nothing to do', async () => {
    const { api } = await serve([{ status: 204 }])
    expect(await api.claim('w1', 10)).toBeUndefined()
  })
})
