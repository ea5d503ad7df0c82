import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_DELIVERY } from '../../src/coordinator/alerts/deliver.js'
import { Waker } from '../../src/coordinator/dispatch/waker.js'
import { createToken, syncBootstrapTokens } from '../../src/coordinator/http/auth.js'
import { type RunningServer, startServer } from '../../src/coordinator/server.js'
import { tokens } from '../support/app.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'
import { definition, workspace } from '../support/fixtures.js'
import { waitFor } from '../support/wait.js'

const post = (base: string, path: string, token: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('the coordinator server', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
    await syncBootstrapTokens(t.db.orm, [
      { role: 'admin', token: tokens.admin },
      { role: 'worker', token: tokens.worker },
    ])
  })
  afterAll(() => t.drop())

  const start = (claimPollMs: number, waker?: Waker) =>
    startServer({
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      config: { claimPollMs },
      ...(waker ? { waker } : {}),
    })
  const parked = (waker: Waker) => waitFor(() => waker.waiting === 1, { what: 'the claim to be parked' })

  it('wakes a claim waiting on one coordinator when another queues a dispatch (NOTIFY)', async () => {
    // Polling slower than the wait and the test's own timeout: only the NOTIFY wake-up answers in time.
    const wakerOfA = new Waker()
    const [a, b] = await Promise.all([start(60_000, wakerOfA), start(60_000)])
    try {
      await post(b.url, '/v1/subagents', tokens.admin, definition())
      const waiting = post(a.url, '/v1/worker/claim', tokens.worker, { workerId: 'w', waitMs: 30_000 })
      await parked(wakerOfA)
      const created = await (
        await post(b.url, '/v1/dispatches', tokens.admin, { subagent: 'frontend-fixer', workspace })
      ).json()
      const res = await waiting
      expect(res.status).toBe(200)
      expect(((await res.json()) as { dispatch: { id: string } }).dispatch.id).toBe(
        (created as { id: string }).id,
      )
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  }, 20_000)

  it('wakes a claim waiting on another coordinator (NOTIFY from the sweep)', async () => {
    const opts = { db: t.db, port: 0, host: '127.0.0.1' }
    // a: never polls nor sweeps within the test, so only a NOTIFY wakes its waiting claim; b: sweeps.
    const wakerOfA = new Waker()
    const a = await startServer({
      ...opts,
      config: { claimPollMs: 60_000, sweepIntervalMs: 600_000 },
      waker: wakerOfA,
    })
    const b = await startServer({ ...opts, config: { claimPollMs: 60_000, sweepIntervalMs: 50 } })
    try {
      await post(a.url, '/v1/subagents', tokens.admin, definition())
      const created = await post(a.url, '/v1/dispatches', tokens.admin, {
        subagent: 'frontend-fixer',
        workspace,
      })
      const { id } = (await created.json()) as { id: string }
      expect((await post(a.url, '/v1/worker/claim', tokens.worker, { workerId: 'w1' })).status).toBe(200)

      const started = Date.now()
      const waiting = post(a.url, '/v1/worker/claim', tokens.worker, { workerId: 'w2', waitMs: 8_000 })
      await parked(wakerOfA)
      await t.db.orm.execute(
        sql`UPDATE dispatches SET lease_expires_at = now() - interval '1 second' WHERE id = ${id}`,
      )
      const res = await waiting
      expect(res.status).toBe(200)
      expect(((await res.json()) as { dispatch: { id: string; attempt: number } }).dispatch).toMatchObject({
        id,
        attempt: 2,
      })
      // Without the NOTIFY, a's claim would look again only at the end of its waitMs.
      expect(Date.now() - started).toBeLessThan(4_000)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  }, 20_000)

  it('refuses a token revoked on another coordinator at once (NOTIFY), though it had it cached', async () => {
    const opts = { db: t.db, port: 0, host: '127.0.0.1' }
    const [a, b] = await Promise.all([
      startServer({ ...opts, config: { tokenCacheMs: 600_000 } }),
      startServer({ ...opts, config: { tokenCacheMs: 600_000 } }),
    ])
    const { id, token } = await createToken(t.db.orm, 'operator')
    const use = async () =>
      (await fetch(`${a.url}/v1/subagents/nobody`, { headers: { authorization: `Bearer ${token}` } })).status
    try {
      expect(await use()).toBe(404)
      const revoked = await fetch(`${b.url}/v1/tokens/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${tokens.admin}` },
      })
      expect(revoked.status).toBe(200)
      const started = Date.now()
      // Without the NOTIFY, a would trust its cached answer for ten minutes.
      await waitFor(async () => (await use()) === 401, { timeoutMs: 2_000, what: 'a to refuse the token' })
      expect(Date.now() - started).toBeLessThan(2_000)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  }, 20_000)

  it('answers waiting claims with 204 on stop, and stop is idempotent', async () => {
    const waker = new Waker()
    const s: RunningServer = await start(60_000, waker)
    const waiting = post(s.url, '/v1/worker/claim', tokens.worker, { workerId: 'w', waitMs: 20_000 })
    await parked(waker)
    await Promise.all([s.stop(), s.stop()])
    expect((await waiting).status).toBe(204)
    await s.stop()
  })

  it('wakes a watch when its sweep expires a dispatch, and ends waiting watches on stop', async () => {
    const endings = new Waker()
    const s = await startServer({
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      // only a wake-up answers a watch early: the poll is a minute away
      config: {
        leaseMs: 200,
        sweepIntervalMs: 50,
        maxAttempts: 1,
        endingsPollMs: 60_000,
        endingsSettleMs: 0,
      },
      endings,
    })
    const watch = async (query: string) => {
      const res = await fetch(`${s.url}/v1/dispatches/endings${query}`, {
        headers: { authorization: `Bearer ${tokens.admin}` },
      })
      return (await res.json()) as { items: { id: string; status: string }[]; nextCursor: string }
    }
    try {
      await post(s.url, '/v1/subagents', tokens.admin, definition('expiring'))
      const from = (await watch('')).nextCursor
      const { id } = (await (
        await post(s.url, '/v1/dispatches', tokens.admin, { subagent: 'expiring', workspace })
      ).json()) as { id: string }
      await waitFor(
        async () => (await post(s.url, '/v1/worker/claim', tokens.worker, { workerId: 'w' })).status !== 200,
        { what: 'the queue to be drained' },
      )
      const started = performance.now()
      const answer = await watch(`?cursor=${from}&waitMs=20000`)
      expect(answer.items.filter((i) => i.id === id)).toEqual([
        expect.objectContaining({ status: 'expired' }),
      ])
      expect(performance.now() - started).toBeLessThan(15_000)
      const waiting = watch(`?cursor=${answer.nextCursor}&waitMs=20000&subagent=nobody`)
      await waitFor(() => endings.waiting === 1, { what: 'the watch to be parked' })
      const stopping = performance.now()
      await s.stop()
      expect((await waiting).items).toEqual([])
      expect(performance.now() - stopping).toBeLessThan(10_000)
    } finally {
      await s.stop()
    }
  })

  it('sweeps a lapsed lease back to the queue on its own', async () => {
    const s = await startServer({
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      config: { leaseMs: 200, sweepIntervalMs: 50 },
    })
    try {
      await post(s.url, '/v1/subagents', tokens.admin, definition('swept'))
      const { id } = (await (
        await post(s.url, '/v1/dispatches', tokens.admin, { subagent: 'swept', workspace })
      ).json()) as { id: string }
      await waitFor(
        async () => (await post(s.url, '/v1/worker/claim', tokens.worker, { workerId: 'w' })).status !== 200,
        { what: 'the queue to be drained' },
      )
      const status = async () => {
        const res = await fetch(`${s.url}/v1/dispatches/${id}`, {
          headers: { authorization: `Bearer ${tokens.admin}` },
        })
        return ((await res.json()) as { status: string }).status
      }
      await waitFor(async () => (await status()) === 'queued', {
        everyMs: 50,
        what: 'the sweep to requeue it',
      })
      expect(await status()).toBe('queued')
    } finally {
      await s.stop()
    }
  })

  it('counts the leases its sweep finds lapsed, and sends the alert as soon as the NOTIFY arrives', async () => {
    const got: string[] = []
    const receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => {
        body += c
      })
      req.on('end', () => {
        got.push(body)
        res.end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`
    // the outbox is looked at every minute: only the NOTIFY of the failing transaction sends in time
    const s = await startServer({
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      config: { sweepIntervalMs: 50, maxAttempts: 1, webhooks: { ...DEFAULT_DELIVERY, pollMs: 60_000 } },
    })
    try {
      // the claim below takes this test's dispatch, not one the tests above left queued
      await t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
      await post(s.url, '/v1/webhooks', tokens.admin, { url, events: ['dispatch.failed'] })
      await post(s.url, '/v1/subagents', tokens.admin, definition('lapsing'))
      await post(s.url, '/v1/dispatches', tokens.admin, { subagent: 'lapsing', workspace })
      const claimed = await post(s.url, '/v1/worker/claim', tokens.worker, { workerId: 'w', waitMs: 0 })
      const id = ((await claimed.json()) as { dispatch: { id: string } }).dispatch.id
      await t.db.orm.execute(
        sql`UPDATE dispatches SET lease_expires_at = now() - interval '1 second' WHERE id = ${id}`,
      )
      await waitFor(() => got.length === 1, { what: 'the alert' })
      expect(JSON.parse(got[0] as string).data).toMatchObject({ dispatchId: id, status: 'expired' })
      const metrics = await (await fetch(`${s.url}/metrics`)).text()
      expect(metrics).toContain('preflight_lease_expiries_total{outcome="expired"} 1')
      expect(metrics).toContain('preflight_dispatches_ended_total{status="expired",reason="lease-expired"} 1')
    } finally {
      await s.stop()
      receiver.closeAllConnections()
      receiver.close()
    }
  })
})
