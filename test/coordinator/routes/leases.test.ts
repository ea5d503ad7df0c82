import { sql } from 'drizzle-orm'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { sweepLeases } from '../../../src/coordinator/db/leases.js'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, lapseLease, queueDispatch, reportFor } from '../../support/fixtures.js'

describe('leases', () => {
  const h = useTestApp({ maxAttempts: 3 })
  beforeAll(async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
  })
  beforeEach(async () => {
    await h.t.db.orm.execute(sql`DELETE FROM dispatches`)
  })

  const status = async (id: string) => (await h.call('GET', `/v1/dispatches/${id}`)).body

  it('extends a live lease on heartbeat', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    await h.t.db.orm.execute(
      sql`UPDATE dispatches SET lease_expires_at = now() + interval '1 second' WHERE id = ${id}`,
    )
    const r = await h.call('POST', `/v1/dispatches/${id}/heartbeat`, { role: 'worker', body: fenceOf(c) })
    expect(r.status).toBe(200)
    expect(Date.parse(r.body.lease.expiresAt)).toBeGreaterThan(Date.parse(c.lease.expiresAt) - 1_000)
    expect(r.body.lease.token).toBe(c.lease.token)
  })

  it('returns a lapsed lease to the queue and the next claim is attempt 2', async () => {
    const id = await queueDispatch(h)
    await claim(h)
    await lapseLease(h, id)
    expect(await sweepLeases(h.t.db.orm)).toEqual([{ id, status: 'queued' }])
    expect((await status(id)).status).toBe('queued')
    expect((await claim(h)).dispatch.attempt).toBe(2)
  })

  it('marks a dispatch expired once its lease lapsed maxAttempts times', async () => {
    const id = await queueDispatch(h)
    for (let i = 0; i < 3; i++) {
      await claim(h)
      await lapseLease(h, id)
      await sweepLeases(h.t.db.orm)
    }
    const view = await status(id)
    expect(view).toMatchObject({ status: 'expired', attempt: 3 })
    expect(view.events.map((e: { step: string }) => e.step).slice(-1)).toEqual(['expired'])
  })

  it('leaves live leases alone when sweeping', async () => {
    await queueDispatch(h)
    await claim(h)
    expect(await sweepLeases(h.t.db.orm)).toEqual([])
  })

  it('refuses a heartbeat from a lapsed lease with 409 lease-lost', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    await lapseLease(h, id)
    const r = await h.call('POST', `/v1/dispatches/${id}/heartbeat`, { role: 'worker', body: fenceOf(c) })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('lease-lost')
  })

  it('refuses a late report from an expired, reclaimed lease and changes nothing', async () => {
    const id = await queueDispatch(h)
    const stale = await claim(h)
    await lapseLease(h, id)
    await sweepLeases(h.t.db.orm)
    const fresh = await claim(h)
    const before = await status(id)
    const r = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(stale), report: reportFor(definition()) },
    })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('lease-lost')
    expect(await status(id)).toEqual(before)
    expect(before).toMatchObject({ status: 'claimed', attempt: fresh.dispatch.attempt })
  })

  it('refuses a report after the lease lapsed even before the sweep ran', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    await lapseLease(h, id)
    const r = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(definition()) },
    })
    expect(r.status).toBe(409)
    expect((await status(id)).preflight).toBeUndefined()
  })

  it('refuses a write with a wrong lease token', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    for (const [method, path, extra] of [
      ['POST', 'heartbeat', {}],
      ['PUT', 'preflight', { report: reportFor(definition()) }],
      ['POST', 'events', { step: 'setup' }],
      ['POST', 'complete', { status: 'setup_failed', reason: 'setup-failed' }],
    ] as const) {
      const r = await h.call(method, `/v1/dispatches/${id}/${path}`, {
        role: 'worker',
        body: { attempt: c.dispatch.attempt, leaseToken: 'not-the-token', ...extra },
      })
      expect([path, r.status, r.body.error.code]).toEqual([path, 409, 'lease-lost'])
    }
    expect((await status(id)).events).toHaveLength(2)
  })

  it('answers 404 for a worker write to an unknown dispatch', async () => {
    const r = await h.call('POST', '/v1/dispatches/00000000-0000-4000-8000-000000000000/heartbeat', {
      role: 'worker',
      body: { attempt: 1, leaseToken: 'x' },
    })
    expect(r.status).toBe(404)
  })
})
