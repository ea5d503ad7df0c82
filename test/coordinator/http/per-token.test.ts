// What one token holds open at once, on a real port: its long-polls and its event streams, each up to
// its limit; past it 429 `concurrency-limit` with Retry-After; a place given back when its client goes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Role } from '../../../src/contract/index.js'
import type { CoordinatorConfig } from '../../../src/coordinator/config.js'
import { Waker } from '../../../src/coordinator/dispatch/waker.js'
import { syncBootstrapTokens } from '../../../src/coordinator/http/auth.js'
import { type RunningServer, startServer } from '../../../src/coordinator/server.js'
import { tokens } from '../../support/app.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { definition, workspace } from '../../support/fixtures.js'
import { waitFor } from '../../support/wait.js'

describe('a token’s long-polls and event streams', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
    await syncBootstrapTokens(
      t.db.orm,
      Object.entries(tokens).map(([role, token]) => ({ role: role as Role, token })),
    )
  })
  afterAll(() => t.drop())

  // A server with these limits; its claim and endings wakers tell when a long-poll is parked.
  async function serving(
    config: Partial<CoordinatorConfig>,
    use: (s: RunningServer, call: Call, parked: { claims: Waker; endings: Waker }) => Promise<void>,
  ) {
    const parked = { claims: new Waker(), endings: new Waker() }
    const s = await startServer({
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      config,
      waker: parked.claims,
      endings: parked.endings,
    })
    const call: Call = (role, method, path, { body, signal } = {}) =>
      fetch(`${s.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${tokens[role]}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      })
    try {
      await use(s, call, parked)
    } finally {
      // (after an aborted request fetch opens a spare connection and sends nothing on it: the stop
      // waits for the client to drop it, 4 s)
      await s.stop()
    }
  }
  type Call = (
    role: Role,
    method: string,
    path: string,
    opts?: { body?: unknown; signal?: AbortSignal },
  ) => Promise<Response>

  const claim = (call: Call, role: Role, waitMs: number, signal?: AbortSignal) =>
    call(role, 'POST', '/v1/worker/claim', { body: { workerId: 'w', waitMs }, ...(signal ? { signal } : {}) })

  async function expectRefused(res: Response, limit: number) {
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      code: 'concurrency-limit',
      details: { limit },
    })
  }

  it('refuses a token’s long-poll past its limit, not one that does not wait nor another token’s', async () => {
    await serving({ longPollsPerToken: 2 }, async (_s, call, parked) => {
      const held = [claim(call, 'worker', 20_000), claim(call, 'worker', 20_000)]
      await waitFor(() => parked.claims.waiting === 2, { what: 'two claims to be parked' })
      await expectRefused(await claim(call, 'worker', 1_000), 2)
      expect((await claim(call, 'worker', 0)).status).toBe(204)
      expect((await claim(call, 'admin', 1)).status).toBe(204)
      // on stop, the held claims answer as they do
      parked.claims.close()
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([204, 204])
    })
  })

  it('counts a token’s claims, endings feeds and waits on a dispatch together', async () => {
    await serving({ longPollsPerToken: 2 }, async (_s, call, parked) => {
      await call('admin', 'POST', '/v1/subagents', { body: definition() })
      // for a worker with the label: it stays queued while the claims below wait
      const created = await call('admin', 'POST', '/v1/dispatches', {
        body: { subagent: 'frontend-fixer', workspace, labels: ['gpu'] },
      })
      const { id } = (await created.json()) as { id: string }
      const feed = `/v1/dispatches/endings?since=${new Date().toISOString()}&waitMs=20000`
      const held = [claim(call, 'admin', 20_000), call('admin', 'GET', feed)]
      await waitFor(() => parked.claims.waiting === 1 && parked.endings.waiting === 1, {
        what: 'a claim and a feed to be parked',
      })
      await expectRefused(
        await call('admin', 'GET', `/v1/dispatches/${id}?waitFor=terminal&timeoutMs=1000`),
        2,
      )
      await expectRefused(await call('admin', 'GET', feed), 2)
      await expectRefused(await claim(call, 'admin', 1_000), 2)
      parked.claims.close()
      parked.endings.close()
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([204, 200])
    })
  })

  it('gives a long-poll’s place back when its client goes away', async () => {
    await serving({ longPollsPerToken: 1 }, async (_s, call, parked) => {
      const gone = new AbortController()
      const held = claim(call, 'worker', 20_000, gone.signal).catch(() => 'aborted')
      await waitFor(() => parked.claims.waiting === 1, { what: 'the claim to be parked' })
      await expectRefused(await claim(call, 'worker', 1), 1)
      gone.abort()
      expect(await held).toBe('aborted')
      // its 20 s are not over: only the client's going gave the place back
      await waitFor(async () => (await claim(call, 'worker', 1)).status === 204, {
        timeoutMs: 3_000,
        what: 'the place to be given back',
      })
    })
  })

  it('refuses a token’s event stream past its limit, and takes one again once its client goes away', async () => {
    await serving({ streamsPerToken: 1 }, async (_s, call) => {
      await call('admin', 'POST', '/v1/subagents', { body: definition() })
      const created = await call('admin', 'POST', '/v1/dispatches', {
        body: { subagent: 'frontend-fixer', workspace },
      })
      const { id } = (await created.json()) as { id: string }
      const stream = (role: Role, signal?: AbortSignal) =>
        call(role, 'GET', `/v1/dispatches/${id}/events`, signal ? { signal } : {})

      const gone = new AbortController()
      const first = await stream('orchestrator', gone.signal)
      expect(first.status).toBe(200)
      await expectRefused(await stream('orchestrator'), 1)
      const other = new AbortController()
      expect((await stream('operator', other.signal)).status).toBe(200)
      other.abort()

      gone.abort()
      const again = new AbortController()
      await waitFor(
        async () => {
          const res = await stream('orchestrator', again.signal)
          if (res.status !== 200) await res.body?.cancel()
          return res.status === 200
        },
        { timeoutMs: 3_000, what: 'the stream’s place to be given back' },
      )
      again.abort()
    })
  })
})
