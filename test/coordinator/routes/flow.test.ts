import { describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'
import { expired, preflightFailed, setupFailed } from '../../support/dispatch-states.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'

// The whole happy path, on real PostgreSQL and on embedded PGlite; then the listing of the ways a dispatch
// ends (driver differences: jsonb, timestamps).
describe.each([
  ['PostgreSQL', false],
  ['PGlite', true],
])('a dispatch from creation to success on %s', (_name, pglite) => {
  // maxAttempts 1: a lapsed lease expires the dispatch at once; settle 0: an ending is answered at once
  const h = useTestApp({ maxAttempts: 1, endingsSettleMs: 0 }, { pglite })

  it('runs create → claim → report → events → complete and shows it all in GET', async () => {
    const def = definition()
    const id = await queueDispatch(h, def)
    const c = await claim(h)
    expect(c.dispatch).toMatchObject({ id, attempt: 1, subagent: { name: def.name, version: 1 } })
    expect(c.subagent).toEqual(def)

    const put = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(def) },
    })
    expect(put.body).toEqual({ decision: 'proceed', status: 'running' })
    const ev = await h.call('POST', `/v1/dispatches/${id}/events`, {
      role: 'worker',
      body: { ...fenceOf(c), step: 'baseline', detail: { head: 'abc' } },
    })
    expect(ev.status).toBe(201)
    const hb = await h.call('POST', `/v1/dispatches/${id}/heartbeat`, { role: 'worker', body: fenceOf(c) })
    expect(hb.body.status).toBe('running')
    const done = await h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), exitCode: 0, baseline: { head: 'abc', tree: 'def' }, durationMs: 12 },
    })
    expect(done.body).toEqual({ id, status: 'succeeded' })

    const view = (await h.call('GET', `/v1/dispatches/${id}`, { role: 'operator' })).body
    expect(view).toMatchObject({
      id,
      status: 'succeeded',
      attempt: 1,
      subagent: { name: def.name, version: 1 },
    })
    expect(view.events.map((e: { step: string }) => e.step)).toEqual([
      'created',
      'claimed',
      'preflight',
      'baseline',
      'completed',
    ])
    expect(view.preflight).toMatchObject({ outcome: 'met', decision: 'proceed', declared: true })
    expect(view.preflight.results).toHaveLength(5)
    expect(view.completion).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      baseline: { head: 'abc', tree: 'def' },
    })
    expect(Date.parse(view.createdAt)).not.toBeNaN()
  })

  it('stores a retried event once and answers it the same', async () => {
    const id = await queueDispatch(h, definition())
    const c = await claim(h)
    const post = (body: Record<string, unknown>) =>
      h.call('POST', `/v1/dispatches/${id}/events`, { role: 'worker', body: { ...fenceOf(c), ...body } })
    const first = await post({ step: 'setup', detail: { command: ['sh', 'x.sh'] } })
    const retry = await post({ step: 'setup', detail: { command: ['sh', 'x.sh'] } })
    expect(first.status).toBe(201)
    expect(retry.status).toBe(201)
    expect(retry.body).toEqual(first.body)
    // not a retry: another detail, or no detail
    await post({ step: 'setup', detail: { command: ['sh', 'y.sh'] } })
    await post({ step: 'setup' })
    await post({ step: 'setup' })
    const view = (await h.call('GET', `/v1/dispatches/${id}`, { role: 'operator' })).body
    expect(view.events.filter((e: { step: string }) => e.step === 'setup')).toEqual([
      { step: 'setup', at: first.body.at, attempt: 1, detail: { command: ['sh', 'x.sh'] } },
      expect.objectContaining({ detail: { command: ['sh', 'y.sh'] } }),
      { step: 'setup', at: expect.any(String), attempt: 1 },
    ])
  })

  it('answers 204 when nothing is claimable', async () => {
    const r = await h.call('POST', '/v1/worker/claim', {
      role: 'worker',
      body: { workerId: 'w1', waitMs: 0 },
    })
    expect(r.status).toBe(204)
  })

  it('lists the ways dispatches end, newest first, and follows them as they end', async () => {
    const from = (await h.call('GET', '/v1/dispatches/endings')).body.nextCursor
    const setup = await setupFailed(h, { reason: 'setup-timeout', detail: 'killed after 600 s' })
    const unmet = await preflightFailed(h, { workerId: 'w2' })
    const faulted = await expired(h, { fault: 'lost the coordinator' })
    const { status, body } = await h.call('GET', '/v1/dispatches?limit=1')
    expect(status).toBe(200)
    expect(body.items[0]).toMatchObject({ id: faulted.id, fault: { message: 'lost the coordinator' } })
    const rest = (await h.call('GET', `/v1/dispatches?limit=2&cursor=${body.nextCursor}`)).body.items
    expect(rest.map((i: { id: string }) => i.id)).toEqual([unmet.id, setup.id])
    expect(rest[0].preflight.failed[0]).toMatchObject({ status: 'unmet', reason: 'not-found' })
    expect(rest[1].setup).toEqual({ reason: 'setup-timeout', exitCode: 1, outputTail: 'killed after 600 s' })
    const byReason = (await h.call('GET', '/v1/dispatches?reason=not-found&worker=w2')).body.items
    expect(byReason.map((i: { id: string }) => i.id)).toEqual([unmet.id])
    const ended = (await h.call('GET', `/v1/dispatches/endings?cursor=${from}`)).body.items
    expect(ended.map((i: { id: string }) => i.id)).toEqual([setup.id, unmet.id, faulted.id])
  })
})
