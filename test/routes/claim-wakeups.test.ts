// Long-polling claims: nothing is claimed for a worker that has gone, and a requeue by the sweep of
// one coordinator wakes the claims waiting on another (NOTIFY).
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedTokens } from '../../src/auth.js'
import { startServer } from '../../src/server.js'
import { createTestApp, type TestApp, tokens } from '../support/app.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'
import { definition, workspace } from '../support/fixtures.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('a claim whose worker has gone', () => {
  let h: TestApp
  beforeAll(async () => {
    // Polling slower than the test: a waiting claim looks again only when woken (here: by the abort).
    h = await createTestApp({ claimPollMs: 60_000 })
    await h.call('POST', '/v1/subagents', { body: definition() })
  })
  afterAll(() => h.close())

  // Queued behind the coordinator's back: no wake-up, as when another coordinator's NOTIFY is late.
  async function queueQuietly(): Promise<string> {
    const id = crypto.randomUUID()
    await h.t.db.orm.execute(
      sql`INSERT INTO dispatches (id, subagent_name, subagent_version, workspace)
          VALUES (${id}, 'frontend-fixer', 1, ${JSON.stringify(workspace)}::jsonb)`,
    )
    return id
  }

  const claimWith = (signal: AbortSignal, waitMs: number) =>
    h.app.request('/v1/worker/claim', {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.worker}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workerId: 'gone', waitMs }),
      signal,
    })

  const dispatch = async (id: string) => (await h.call('GET', `/v1/dispatches/${id}`)).body

  it('leaves a dispatch queued when the long-poll was aborted while waiting', async () => {
    await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
    const ac = new AbortController()
    const waiting = claimWith(ac.signal, 20_000)
    await sleep(300)
    const id = await queueQuietly()
    ac.abort()
    expect((await waiting).status).toBe(204)
    expect(await dispatch(id)).toMatchObject({ status: 'queued', attempt: 0 })
  })

  it('claims nothing for a request aborted before its first claim', async () => {
    await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
    const id = await queueQuietly()
    expect((await claimWith(AbortSignal.abort(), 0)).status).toBe(204)
    expect(await dispatch(id)).toMatchObject({ status: 'queued', attempt: 0 })
  })
})

describe('a dispatch requeued by the sweep', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
    await seedTokens(t.db.orm, [
      { role: 'admin', token: tokens.admin },
      { role: 'worker', token: tokens.worker },
    ])
  })
  afterAll(() => t.drop())

  const post = (base: string, path: string, token: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

  it('wakes a claim waiting on another coordinator (NOTIFY from the sweep)', async () => {
    const opts = { db: t.db, port: 0, host: '127.0.0.1', log: () => {} }
    // a: never polls nor sweeps within the test, so only a NOTIFY wakes its waiting claim; b: sweeps.
    const a = await startServer({ ...opts, config: { claimPollMs: 60_000, sweepIntervalMs: 600_000 } })
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
      await sleep(300)
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
})
