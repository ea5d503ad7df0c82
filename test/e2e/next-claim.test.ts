// End to end: a worker without --agent-uid asks for its next dispatch with each completion (`next`), so
// a queue of dispatches costs one claim request, not one each; --max-dispatches still bounds what it takes.
import { existsSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  client,
  dispatch,
  e2eSuite,
  getDispatch,
  register,
  serveCoordinator,
  spawnWorker,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'

const suite = e2eSuite()
let coordinator: { url: string }

beforeAll(async () => {
  coordinator = await serveCoordinator(suite)
})

describe('the next dispatch claimed with a completion', () => {
  it('runs a queue of three with one claim request, and takes no more than --max-dispatches', async () => {
    await register(coordinator.url, { name: 'queued-work', agent: { command: ['true'] } })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push(await dispatch(coordinator.url, 'queued-work', { repo: suite.repo }))
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'next'),
      id: 'next-worker',
      args: ['--max-dispatches', '3'],
    })
    for (const id of ids.slice(0, 3))
      expect((await waitForStatus(coordinator.url, id, 30_000, [worker])).status).toBe('succeeded')
    expect(await worker.exited).toBe(0)
    const claims = worker.records().filter((r) => r.msg === 'claimed dispatch')
    expect(claims.map((r) => r.with)).toEqual([undefined, 'completion', 'completion'])
    // the third completion did not ask: the fourth dispatch was never claimed
    expect(await getDispatch(coordinator.url, ids[3] as string)).toMatchObject({
      status: 'queued',
      attempt: 0,
    })
    // the queue left empty for the next test
    await client(coordinator.url, TOKENS.orchestrator).cancelDispatch(ids[3] as string)
  }, 90_000)
})

// A coordinator from before `next` refuses the key (400 invalid-request naming it). A slot told so
// sends the completion again without it, and no slot of the worker asks again: the refusal is the
// worker's, not the slot's. The proxy plays that coordinator in front of today's.
describe('a coordinator that refuses next', () => {
  let proxy: Server | undefined
  afterAll(() => new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve())))

  it('is asked once by the whole worker: a slot that was not refused asks no more', async () => {
    const flag = join(suite.scratch, 'refused')
    const asked: string[] = []
    const target = new URL(coordinator.url)
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const body = Buffer.concat(chunks)
        if (req.url?.endsWith('/complete')) {
          if ('next' in JSON.parse(body.toString() || '{}')) {
            asked.push(req.url)
            res.writeHead(400, { 'content-type': 'application/json' })
            res.end(
              JSON.stringify({
                error: { code: 'invalid-request', message: 'json: Unrecognized key: "next"' },
              }),
            )
            return
          }
          // the refused slot sends its completion again only once it was told (worker/complete.ts): from
          // here the slot that waits on this file ends its agent
          if (asked.length > 0 && !existsSync(flag)) writeFileSync(flag, '')
        }
        const forwarded = request(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
          },
        )
        forwarded.on('error', () => res.destroy())
        forwarded.end(body)
      })
    })
    await new Promise<void>((resolve) => proxy?.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
    await register(coordinator.url, { name: 'quick-work', agent: { command: ['true'] } })
    await register(coordinator.url, {
      name: 'waiting-work',
      agent: { command: ['sh', '-c', `while [ ! -e '${flag}' ]; do sleep 0.05; done`] },
    })
    const waiting = await dispatch(coordinator.url, 'waiting-work', { repo: suite.repo })
    const quick = await dispatch(coordinator.url, 'quick-work', { repo: suite.repo })
    const worker = spawnWorker(url, {
      workdir: join(suite.scratch, 'refused-next'),
      id: 'refused-next-worker',
      args: ['--concurrency', '2'],
    })
    try {
      for (const id of [quick, waiting])
        expect((await waitForStatus(coordinator.url, id, 30_000, [worker])).status).toBe('succeeded')
      const more = await dispatch(coordinator.url, 'quick-work', { repo: suite.repo })
      expect((await waitForStatus(coordinator.url, more, 30_000, [worker])).status).toBe('succeeded')
    } finally {
      await worker.stop()
    }
    expect(asked).toEqual([`/v1/dispatches/${quick}/complete`])
  }, 90_000)
})
