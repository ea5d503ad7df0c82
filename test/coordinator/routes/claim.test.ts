import { sql } from 'drizzle-orm'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { rows } from '../../../src/coordinator/db/client.js'
import { useTestApp } from '../../support/app.js'
import { claim, definition, queueDispatch, workspace } from '../../support/fixtures.js'
import { waitFor } from '../../support/wait.js'

describe('claiming', () => {
  const h = useTestApp({ claimPollMs: 50 })
  beforeAll(async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
  })
  beforeEach(async () => {
    await h.t.db.orm.execute(sql`DELETE FROM dispatches`)
  })

  it('hands each of 500 dispatches to exactly one of 8 concurrent claimers', async () => {
    await h.t.db.orm.execute(
      sql`INSERT INTO dispatches (id, subagent_name, subagent_version, workspace, created_at)
          SELECT gen_random_uuid(), 'frontend-fixer', 1, ${JSON.stringify(workspace)}::jsonb,
                 now() - make_interval(secs => 1000 - i) FROM generate_series(1, 500) i`,
    )
    const claimer = async (workerId: string) => {
      const got: string[] = []
      for (;;) {
        const r = await h.call('POST', '/v1/worker/claim', { role: 'worker', body: { workerId } })
        if (r.status === 204) return got
        got.push(r.body.dispatch.id)
      }
    }
    const claimed = (await Promise.all(Array.from({ length: 8 }, (_, i) => claimer(`w${i}`)))).flat()
    expect(claimed).toHaveLength(500)
    expect(new Set(claimed).size).toBe(500)
    const left = await rows<{ n: number }>(
      h.t.db.orm,
      sql`SELECT count(*)::int AS n FROM dispatches WHERE status <> 'claimed' OR attempt <> 1`,
    )
    expect(left[0]?.n).toBe(0)
  })

  it('claims the oldest queued dispatch first', async () => {
    const first = await queueDispatch(h)
    await queueDispatch(h)
    expect((await claim(h)).dispatch.id).toBe(first)
  })

  it('hands out the exact definition version the dispatch was created with', async () => {
    await h.call('POST', '/v1/subagents', { body: definition('versioned') })
    await queueDispatch(h, definition('versioned'))
    const v2 = { ...definition('versioned'), description: 'v2' }
    await h.call('POST', '/v1/subagents', { body: v2 })
    const c = await claim(h)
    expect(c.dispatch.subagent).toEqual({ name: 'versioned', version: 1 })
    expect(c.subagent).toEqual(definition('versioned'))
  })

  it('gives a dispatch with labels only to a worker that has them all', async () => {
    await queueDispatch(h, definition(), { labels: ['gpu', 'linux'] })
    const none = await h.call('POST', '/v1/worker/claim', {
      role: 'worker',
      body: { workerId: 'a', labels: ['gpu'] },
    })
    expect(none.status).toBe(204)
    const r = await h.call('POST', '/v1/worker/claim', {
      role: 'worker',
      body: { workerId: 'b', labels: ['linux', 'gpu', 'big'] },
    })
    expect(r.body.dispatch.labels).toEqual(['gpu', 'linux'])
  })

  it('returns a waiting claim as soon as a dispatch is queued', async () => {
    const waiting = h.call('POST', '/v1/worker/claim', {
      role: 'worker',
      body: { workerId: 'w', waitMs: 20_000 },
    })
    await waitFor(() => h.waker.waiting === 1, { what: 'the claim to be parked' })
    const id = await queueDispatch(h)
    const r = await waiting
    expect(r.status).toBe(200)
    expect(r.body.dispatch.id).toBe(id)
  })

  it('answers a lease token and an expiry in the future', async () => {
    await queueDispatch(h)
    const c = await claim(h)
    expect(c.lease.token.length).toBeGreaterThanOrEqual(32)
    expect(Date.parse(c.lease.expiresAt)).toBeGreaterThan(Date.now() - 5_000)
  })
})
