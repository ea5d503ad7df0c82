// The coordinator under slow clients, on a real port, as an attacker without a token holds it: requests
// sent in part and held, more connections than the coordinator takes. It answers /healthz meanwhile,
// closes what it holds within its headers timeout and refuses connections past its cap; long-polls and
// event streams outlive every one of those timeouts.
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CoordinatorConfig } from '../../src/coordinator/config.js'
import { syncBootstrapTokens } from '../../src/coordinator/http/auth.js'
import { type RunningServer, startServer } from '../../src/coordinator/server.js'
import { tokens } from '../support/app.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'
import { definition, workspace } from '../support/fixtures.js'
import { waitFor } from '../support/wait.js'

// A client that sends part of a request (its headers never end) and holds the socket: `closed` once the
// coordinator closed it, with what it answered.
function holdHalfSent(
  s: RunningServer,
  part = 'GET /v1/dispatches HTTP/1.1\r\nHost: x\r\nAuthorization: Bear',
) {
  const held = { closed: false, answer: '' }
  const socket = connect(s.port, '127.0.0.1')
  socket.on('data', (chunk) => {
    held.answer += chunk
  })
  socket.on('close', () => {
    held.closed = true
  })
  socket.on('error', () => {})
  const written = new Promise<void>((resolve) =>
    socket.once('connect', () => socket.write(part, () => resolve())),
  )
  return { held, written, socket }
}

async function flood(s: RunningServer, n: number) {
  const sockets = Array.from({ length: n }, () => holdHalfSent(s))
  await Promise.all(sockets.map((x) => x.written))
  return {
    sockets,
    closed: () => sockets.filter((x) => x.held.closed).length,
    destroy: () => {
      for (const x of sockets) x.socket.destroy()
    },
  }
}

const healthz = async (s: RunningServer) => {
  try {
    return (await fetch(`${s.url}/healthz`)).status
  } catch {
    return 0 // the connection was closed unanswered
  }
}

describe('the coordinator under slow clients', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
    await syncBootstrapTokens(t.db.orm, [
      { role: 'admin', token: tokens.admin },
      { role: 'worker', token: tokens.worker },
    ])
  })
  afterAll(() => t.drop())

  async function serving(config: Partial<CoordinatorConfig>, use: (s: RunningServer) => Promise<void>) {
    const s = await startServer({ db: t.db, port: 0, host: '127.0.0.1', config })
    try {
      await use(s)
    } finally {
      await s.stop()
    }
  }

  it('answers /healthz while half-sent requests are held, and closes them within the headers timeout', async () => {
    await serving({ headersTimeoutMs: 1_500, receiveTimeoutMs: 1_500 }, async (s) => {
      const held = await flood(s, 200)
      try {
        const asked = performance.now()
        expect(await healthz(s)).toBe(200)
        expect(performance.now() - asked).toBeLessThan(1_000)
        expect(held.closed()).toBe(0)
        // Node's default: 60 s for the headers, looked at every 30 s
        await waitFor(() => held.closed() === 200, {
          timeoutMs: 4_000,
          what: 'the half-sent requests to be closed',
        })
        expect(held.sockets.filter((x) => !x.held.answer.startsWith('HTTP/1.1 408 '))).toEqual([])
      } finally {
        held.destroy()
      }
    })
  })

  it('closes a request whose body stops coming within the receive timeout', async () => {
    await serving({ headersTimeoutMs: 500, receiveTimeoutMs: 1_000 }, async (s) => {
      // a worker's claim, its headers whole, its body never: the route waits on the body
      const head = `POST /v1/worker/claim HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.worker}\r\n`
      const body = `${head}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"worker`
      const { held, written, socket } = holdHalfSent(s, body)
      try {
        await written
        await waitFor(() => held.closed, { timeoutMs: 3_000, what: 'the request to be closed' })
        expect(held.answer).toMatch(/^HTTP\/1.1 408 /)
      } finally {
        socket.destroy()
      }
    })
  })

  it('closes connections past its cap as they come, and takes new ones once held ones close', async () => {
    // headers that may take a minute: only the cap turns the flood away
    await serving({ maxConnections: 20, headersTimeoutMs: 60_000, receiveTimeoutMs: 60_000 }, async (s) => {
      const held = await flood(s, 20)
      try {
        const more = holdHalfSent(s)
        await more.written
        await waitFor(() => more.held.closed, {
          timeoutMs: 2_000,
          what: 'the connection past the cap to be closed',
        })
        expect(more.held.answer).toBe('')
        expect(await healthz(s)).toBe(0)
        held.sockets[0]?.socket.destroy()
        await waitFor(async () => (await healthz(s)) === 200, {
          timeoutMs: 2_000,
          what: 'a place to be free',
        })
        expect(held.closed()).toBe(1)
      } finally {
        held.destroy()
      }
    })
  })

  it('holds /healthz off no longer than the headers timeout under a flood past its cap', async () => {
    await serving({ maxConnections: 50, headersTimeoutMs: 1_000, receiveTimeoutMs: 1_000 }, async (s) => {
      const held = await flood(s, 150)
      try {
        const started = performance.now()
        await waitFor(async () => (await healthz(s)) === 200, {
          timeoutMs: 4_000,
          what: '/healthz to answer',
        })
        expect(performance.now() - started).toBeLessThan(3_000)
        await waitFor(() => held.closed() === 150, { timeoutMs: 3_000, what: 'the flood to be closed' })
      } finally {
        held.destroy()
      }
    })
  })

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    await serving({ keepAliveTimeoutMs: 300 }, async (s) => {
      const { held, written, socket } = holdHalfSent(s, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
      try {
        await written
        // Node's default: 5 s
        await waitFor(() => held.closed, { timeoutMs: 2_000, what: 'the idle connection to be closed' })
        expect(held.answer).toMatch(/^HTTP\/1.1 200 /)
      } finally {
        socket.destroy()
      }
    })
  })

  it('keeps a long-poll and an event stream open past every one of those timeouts', async () => {
    const short = { headersTimeoutMs: 200, receiveTimeoutMs: 200, keepAliveTimeoutMs: 200 }
    const config = { ...short, eventStreams: { max: 10, keepAliveMs: 200, maxDurationMs: 60_000 } }
    await serving(config, async (s) => {
      const call = (method: string, path: string, token: string, body?: unknown) =>
        fetch(`${s.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
      await call('POST', '/v1/subagents', tokens.admin, definition())
      const { id } = (await (
        await call('POST', '/v1/dispatches', tokens.admin, { subagent: 'frontend-fixer', workspace })
      ).json()) as { id: string }
      // the queue drained: the long-poll below waits its whole waitMs
      await waitFor(
        async () => (await call('POST', '/v1/worker/claim', tokens.worker, { workerId: 'w' })).status === 204,
      )

      const started = performance.now()
      const stream = await call('GET', `/v1/dispatches/${id}/events`, tokens.admin)
      const claim = await call('POST', '/v1/worker/claim', tokens.worker, { workerId: 'w', waitMs: 1_200 })
      expect(claim.status).toBe(204)
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_100)

      // the stream sent its keep-alive comments all along, and is open still
      const reader = stream.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>
      let text = ''
      while ((text.match(/: keep-alive/g) ?? []).length < 6) {
        const { value, done } = await reader.read()
        expect(done).toBe(false)
        text += new TextDecoder().decode(value)
      }
      await reader.cancel()
    })
  })
})
