// Worker events are bounded: 32 per attempt and 1 MiB of detail per dispatch; beyond, 422 event-limit
// and nothing stored. A normal dispatch — every step this project's worker posts, on every attempt,
// each retried — never comes near. GET /v1/dispatches/{id} shows the newest 200 and the total.
import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import type { ClaimResponse } from '../../../src/contract/index.js'
import { EVENTS_SHOWN } from '../../../src/coordinator/db/events.js'
import { sweepLeases } from '../../../src/coordinator/db/leases.js'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, lapseLease, queueDispatch } from '../../support/fixtures.js'

describe('event limits', () => {
  const h = useTestApp({ maxAttempts: 5 })

  // A fresh dispatch claimed by a worker (other queued ones cancelled, so the claim takes this one).
  async function claimed() {
    await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
    const id = await queueDispatch(h)
    const c = await claim(h)
    expect(c.dispatch.id).toBe(id)
    return { id, c }
  }

  const post = (id: string, c: ClaimResponse, step: string, detail?: Record<string, unknown>) =>
    h.call('POST', `/v1/dispatches/${id}/events`, {
      role: 'worker',
      body: { ...fenceOf(c), step, ...(detail ? { detail } : {}) },
    })

  const view = async (id: string) => (await h.call('GET', `/v1/dispatches/${id}`)).body

  // The lease runs out and the sweep requeues the dispatch; the next claim is the next attempt.
  async function nextAttempt(id: string) {
    await lapseLease(h, id)
    await sweepLeases(h.t.db.orm)
    const c = await claim(h)
    expect(c.dispatch.id).toBe(id)
    return c
  }

  it('accepts every step of every attempt of a normal dispatch, each retried', async () => {
    const tail = `${'output line\n'.repeat(600)}`.slice(-8192)
    const steps: [string, Record<string, unknown>?][] = [
      ['prepare'],
      ['setup', { command: ['sh', 'preflight-setup.sh'] }],
      [
        'setup-failed',
        { reason: 'setup-exit', detail: `sh preflight-setup.sh exited 1; last output:\n${tail}` },
      ],
      ['verify'],
      ['report', { outcome: 'met' }],
      ['baseline'],
      ['agent', { command: definition().agent.command }],
      ['agent-timeout', { timeoutMs: 600_000, exitCode: 124 }],
      ['fault', { message: 'x'.repeat(2000) }],
    ]
    let { id, c } = await claimed()
    for (let attempt = 1; attempt <= 5; attempt++) {
      if (attempt > 1) c = await nextAttempt(id)
      for (const [step, detail] of steps) {
        const first = await post(id, c, step, detail)
        expect(first.status, step).toBe(201)
        // The answer was lost: the worker sends the same again and gets the stored event.
        expect(await post(id, c, step, detail)).toMatchObject({ status: 201, body: first.body })
      }
    }
    const v = await view(id)
    expect(v.events.filter((e: { step: string }) => e.step === 'setup-failed')).toHaveLength(5)
    expect(v.eventCount).toBe(v.events.length)
  })

  it('refuses the 33rd event of an attempt with 422 event-limit and stores nothing', async () => {
    const { id, c } = await claimed()
    for (let i = 0; i < 32; i++) expect((await post(id, c, 'progress', { i })).status).toBe(201)
    const before = (await view(id)).eventCount
    const over = await post(id, c, 'progress', { i: 32 })
    expect(over.status).toBe(422)
    expect(over.body.error).toMatchObject({
      code: 'event-limit',
      details: { limit: 'events-per-attempt', max: 32 },
    })
    expect((await view(id)).eventCount).toBe(before)
  })

  it('still answers a retry of a stored event at the limit with the stored event', async () => {
    const { id, c } = await claimed()
    const first = await post(id, c, 'prepare')
    for (let i = 1; i < 32; i++) await post(id, c, 'progress', { i })
    expect(await post(id, c, 'prepare')).toMatchObject({ status: 201, body: first.body })
  })

  it('gives the next attempt its own 32 events', async () => {
    const { id, c } = await claimed()
    for (let i = 0; i < 32; i++) await post(id, c, 'progress', { i })
    expect((await post(id, c, 'progress', { i: 32 })).status).toBe(422)
    const next = await nextAttempt(id)
    expect((await post(id, next, 'prepare')).status).toBe(201)
  })

  it('stores exactly 32 of 40 events posted at once', async () => {
    const { id, c } = await claimed()
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => post(id, c, 'progress', { i })))
    expect(replies.filter((r) => r.status === 201)).toHaveLength(32)
    expect(replies.filter((r) => r.status === 422)).toHaveLength(8)
    const v = await view(id)
    expect(v.events.filter((e: { step: string }) => e.step === 'progress')).toHaveLength(32)
  })

  it('refuses detail beyond 1 MiB per dispatch with 422 event-limit and stores nothing', async () => {
    const { id, c } = await claimed()
    const big = { output: 'x'.repeat(600 * 1024) }
    expect((await post(id, c, 'setup', big)).status).toBe(201)
    const over = await post(id, c, 'agent', big)
    expect(over.status).toBe(422)
    expect(over.body.error).toMatchObject({ code: 'event-limit', details: { limit: 'detail-bytes' } })
    const v = await view(id)
    expect(v.events.map((e: { step: string }) => e.step)).toEqual(['created', 'claimed', 'setup'])
    // A small event still fits, in this attempt and the next.
    expect((await post(id, c, 'verify')).status).toBe(201)
    const next = await nextAttempt(id)
    expect((await post(id, next, 'agent', big)).status).toBe(422)
    expect((await post(id, next, 'prepare')).status).toBe(201)
  })

  it('shows the newest 200 events, oldest first, and counts them all', async () => {
    const { id, c } = await claimed()
    // 500 more events as many attempts would leave them (written directly: the limits bound the API).
    await h.t.db.orm.execute(
      sql`UPDATE dispatches SET events = events || (
            SELECT jsonb_agg(jsonb_build_object('step', 'progress', 'at', '2026-01-01T00:00:00.000Z', 'attempt', 1,
                                                'detail', jsonb_build_object('i', i)) ORDER BY i)
            FROM generate_series(1, 500) i)
          WHERE id = ${id}`,
    )
    await post(id, c, 'verify')
    const v = await view(id)
    expect(v.eventCount).toBe(503)
    expect(v.events).toHaveLength(EVENTS_SHOWN)
    expect(v.events.at(-1).step).toBe('verify')
    expect(v.events[0].detail).toEqual({ i: 302 })
  })
})
