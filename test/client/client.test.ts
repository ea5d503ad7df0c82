// preflight/client against a scripted HTTP server on loopback: which calls are sent again, what a
// refusal becomes, how a query is written. (The worker's use of it: test/worker/api.test.ts.)
import { createServer, type Server } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { ApiError, createClient, LeaseLostError, NetworkError } from '../../src/client/index.js'

type Answer = { status: number; body?: unknown; headers?: Record<string, string> }
let server: Server | undefined
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())))

async function serve(answers: Answer[]) {
  const seen: { method?: string; url?: string; body: string }[] = []
  server = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    seen.push({ method: req.method, url: req.url, body })
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)] ?? { status: 500 }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body))
  })
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`
  const client = createClient({ url, token: 't', retry: { budgetMs: 5_000, baseMs: 5, maxDelayMs: 20 } })
  return { client, seen, url }
}

const busy = { status: 503, body: { error: { code: 'unavailable', message: 'try again' } } }
const created = { status: 201, body: { id: '00000000-0000-4000-8000-000000000001', status: 'queued' } }
const workspace = { repo: 'https://git.example.invalid/a.git' }

describe('preflight/client', () => {
  it('sends a dispatch again after a 503 only when it has an idempotencyKey', async () => {
    const once = await serve([busy, created])
    await expect(once.client.createDispatch({ subagent: 'a', workspace })).rejects.toMatchObject({
      status: 503,
      code: 'unavailable',
    })
    expect(once.seen).toHaveLength(1)
    server?.close()
    const keyed = await serve([busy, created])
    expect(await keyed.client.createDispatch({ subagent: 'a', workspace, idempotencyKey: 'k' })).toEqual(
      created.body,
    )
    expect(keyed.seen).toHaveLength(2)
  })

  it('retries a dispatch at its own path, sent again after a 503 only with an idempotencyKey', async () => {
    const id = created.body.id
    const once = await serve([busy, created])
    await expect(once.client.retryDispatch(id)).rejects.toMatchObject({ status: 503 })
    expect(once.seen).toEqual([{ method: 'POST', url: `/v1/dispatches/${id}/retry`, body: '{}' }])
    server?.close()
    const keyed = await serve([busy, created])
    expect(await keyed.client.retryDispatch(id, { idempotencyKey: 'k' })).toEqual(created.body)
    expect(keyed.seen.map((s) => s.body)).toEqual(['{"idempotencyKey":"k"}', '{"idempotencyKey":"k"}'])
  })

  it('makes one try of a webhook registration, and of every call with retry: false', async () => {
    const { client, seen } = await serve([busy])
    await expect(
      client.createWebhook({ url: 'https://hooks.example.invalid', events: ['dispatch.failed'] }),
    ).rejects.toBeInstanceOf(ApiError)
    await expect(client.getDispatch(created.body.id, { retry: false })).rejects.toBeInstanceOf(ApiError)
    expect(seen).toHaveLength(2)
  })

  it('retries a read after a 503, and reads the envelope of a refusal', async () => {
    const { client, seen } = await serve([
      busy,
      { status: 404, body: { error: { code: 'not-found', message: 'no dispatch x', details: { id: 'x' } } } },
    ])
    const err = await client.getDispatch('x').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ status: 404, code: 'not-found', said: 'no dispatch x', details: { id: 'x' } })
    expect((err as Error).message).toBe('GET /v1/dispatches/x: 404 no dispatch x')
    expect(seen).toHaveLength(2)
  })

  it('turns a 409 on a fenced write into LeaseLostError, and a 409 elsewhere into an ApiError', async () => {
    const conflict = { status: 409, body: { error: { code: 'lease-lost', message: 'superseded' } } }
    const { client } = await serve([conflict])
    const fence = { id: created.body.id, attempt: 1, leaseToken: 'l' }
    await expect(client.appendEvent(fence, 'setup')).rejects.toBeInstanceOf(LeaseLostError)
    const other = await client.createDispatch({ subagent: 'a', workspace }).catch((e: unknown) => e)
    expect(other).toBeInstanceOf(ApiError)
    expect(other).not.toBeInstanceOf(LeaseLostError)
  })

  it('writes a query with arrays repeated and undefined left out, under the base URL', async () => {
    const { client, seen } = await serve([{ status: 200, body: { items: [], nextCursor: null } }])
    await client.listDispatches({ status: ['failed', 'expired'], subagent: undefined, limit: 5 })
    expect(seen[0]?.url).toBe('/v1/dispatches?status=failed&status=expired&limit=5')
  })

  it('follows no redirect, and sends nothing again after one: the token goes to its coordinator alone', async () => {
    const moved = { status: 308, headers: { location: 'https://elsewhere.example/healthz' } }
    const { client, seen } = await serve([moved, { status: 200, body: { status: 'ok' } }])
    // a read is retried after a 5xx: a redirect says the address is wrong, not busy
    const err = await client.getLiveness().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ status: 308 })
    expect((err as ApiError).message).toMatch(/redirected to https:\/\/elsewhere\.example\/healthz/)
    expect(seen.map((r) => r.url)).toEqual(['/healthz'])
  })

  it('refuses a redirect through a fetch of its own too (the CLI gives it one)', async () => {
    const moved = { status: 307, headers: { location: '/elsewhere' } }
    const { seen, url } = await serve([moved, { status: 200, body: { status: 'ok' } }])
    const client = createClient({ url, token: 't', fetch: (input, init) => fetch(input, init) })
    await expect(client.getLiveness()).rejects.toMatchObject({
      status: 307,
      said: /redirected to \/elsewhere/,
    })
    expect(seen.map((r) => r.url)).toEqual(['/healthz'])
  })

  it('says which coordinator it could not reach', async () => {
    // a port nobody listens on any more
    const { url } = await serve([])
    await new Promise<void>((r) => server?.close(() => r()))
    server = undefined
    const base = url.replace(/\/$/, '')
    const err = await createClient({ url, token: 't', retry: false })
      .getLiveness()
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NetworkError)
    expect((err as NetworkError).message).toBe(
      `GET /healthz: cannot reach the coordinator at ${base}: ECONNREFUSED`,
    )
  })
})
