// Orchestrators steer dispatches through the HTTP app on a real database: a cancel at any point before
// the end (who, why, the worker told, a race with a completion having one winner) and deadlines.
import { sql } from 'drizzle-orm'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ClaimResponse } from '../../../src/contract/index.js'
import { sweepLeases } from '../../../src/coordinator/db/leases.js'
import { iso } from '../../../src/coordinator/db/sql.js'
import { useTestApp } from '../../support/app.js'
import {
  claim,
  definition,
  fenceOf,
  lapseLease,
  queueDispatch,
  reportFor,
  workspace,
} from '../../support/fixtures.js'

const h = useTestApp()

beforeAll(async () => {
  await h.call('POST', '/v1/subagents', { body: definition() })
})

// Every queued dispatch of earlier tests is cancelled: the next claim takes the next one queued.
beforeEach(async () => {
  await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
})

const cancel = (id: string, body?: unknown) =>
  h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator', ...(body ? { body } : {}) })

// A dispatch whose report was stored and answered proceed: running, its fence held by the test.
async function running(extra: Record<string, unknown> = {}): Promise<{ id: string; c: ClaimResponse }> {
  const id = await queueDispatch(h, definition(), extra)
  const c = await claim(h)
  const r = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
    role: 'worker',
    body: { ...fenceOf(c), report: reportFor(definition()) },
  })
  expect(r.body.status).toBe('running')
  return { id, c }
}

const complete = (id: string, c: ClaimResponse, body: Record<string, unknown>) =>
  h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body: { ...fenceOf(c), ...body } })

const create = (body: Record<string, unknown>) =>
  h.call('POST', '/v1/dispatches', {
    role: 'orchestrator',
    body: { subagent: 'frontend-fixer', workspace, ...body },
  })

describe('cancel', () => {
  it('records who cancelled and why, tells the worker on every fenced write, and keeps what it had', async () => {
    const { id, c } = await running()
    const r = await cancel(id, { reason: 'the task was abandoned' })
    expect(r).toMatchObject({ status: 200, body: { id, status: 'cancelled' } })
    for (const [method, path, body] of [
      ['POST', 'heartbeat', {}],
      ['POST', 'events', { step: 'agent' }],
    ] as const) {
      const refused = await h.call(method, `/v1/dispatches/${id}/${path}`, {
        role: 'worker',
        body: { ...fenceOf(c), ...body },
      })
      expect([path, refused.status, refused.body.error.code]).toEqual([path, 409, 'cancelled'])
    }
    const had = await complete(id, c, { status: 'cancelled', exitCode: 143, detail: 'partial output' })
    expect(had).toMatchObject({ status: 200, body: { id, status: 'cancelled' } })
    const view = (await h.call('GET', `/v1/dispatches/${id}`)).body
    const orchestrator = (await h.call('GET', '/v1/tokens')).body.items.find(
      (t: { role: string }) => t.role === 'orchestrator',
    )
    expect(view).toMatchObject({
      status: 'cancelled',
      cancel: { by: { tokenId: orchestrator.id, role: 'orchestrator' }, reason: 'the task was abandoned' },
      completion: { status: 'cancelled', exitCode: 143, detail: 'partial output' },
      preflight: { outcome: 'met' },
    })
    const ev = view.events.find((e: { step: string }) => e.step === 'cancelled')
    expect(ev.detail).toMatchObject({ reason: 'the task was abandoned', by: { role: 'orchestrator' } })
    // the cancel's end stays where it was: the endings do not see it end twice
    const ended = await h.t.db.orm.execute(sql`SELECT ${iso('ended_at')} = (SELECT e ->> 'at'
      FROM jsonb_array_elements(events) AS e WHERE e ->> 'step' = 'cancelled') AS same FROM dispatches WHERE id = ${id}`)
    expect(ended).toMatchObject([{ same: true }])
  })

  it('tells the worker of a claimed dispatch at its report, which is not stored', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    expect((await cancel(id)).status).toBe(200)
    const r = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(definition()) },
    })
    expect([r.status, r.body.error.code]).toEqual([409, 'cancelled'])
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.preflight).toBeUndefined()
  })

  it('takes no body, an empty one, or a reason; refuses a reason too long or an unknown field', async () => {
    for (const body of [undefined, {}, { reason: 'x'.repeat(1024) }]) {
      const id = await queueDispatch(h)
      expect((await cancel(id, body)).status).toBe(200)
    }
    // an empty body under Content-Type: application/json, as clients sent it before the cancel took one
    const empty = await queueDispatch(h)
    expect(
      (await h.call('POST', `/v1/dispatches/${empty}/cancel`, { role: 'orchestrator', raw: '' })).status,
    ).toBe(200)
    const id = await queueDispatch(h)
    const broken = await h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator', raw: '{' })
    expect([broken.status, broken.body.error.code]).toEqual([400, 'malformed-json'])
    for (const body of [{ reason: 'x'.repeat(1025) }, { reason: '' }, { why: 'x' }, { reason: 'a\u0000b' }]) {
      const r = await cancel(id, body)
      expect([r.status, r.body.error.code]).toEqual([400, 'invalid-request'])
    }
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.status).toBe('queued')
  })

  it('refuses a cancelled completion for a dispatch that was not cancelled', async () => {
    const { id, c } = await running()
    const r = await complete(id, c, { status: 'cancelled', exitCode: 1 })
    expect([r.status, r.body.error.code]).toEqual([409, 'invalid-state'])
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.status).toBe('running')
  })

  it('racing a completion, in either order, has one winner both sides see', async () => {
    const seen = new Set<string>()
    for (let run = 0; run < 40; run++) {
      const { id, c } = await running()
      const exit = { exitCode: run % 3 === 0 ? 1 : 0 }
      const [canceller, worker] =
        run % 2 === 0
          ? await Promise.all([cancel(id), complete(id, c, exit)])
          : await Promise.all([complete(id, c, exit), cancel(id)]).then(([w, k]) => [k, w] as const)
      const final = (await h.call('GET', `/v1/dispatches/${id}`)).body
      const cancellerSaw =
        canceller.status === 200 ? canceller.body.status : canceller.body.error.details.status
      expect(worker.status).toBe(200)
      expect([cancellerSaw, worker.body.status]).toEqual([final.status, final.status])
      expect(final.completion.exitCode).toBe(exit.exitCode)
      if (final.status === 'cancelled') expect(final.completion.status).toBe('cancelled')
      seen.add(final.status)
    }
    // both outcomes happened over the runs
    expect(seen.has('cancelled')).toBe(true)
    expect(seen.size).toBeGreaterThan(1)
  }, 60_000)
})

describe('deadlines', () => {
  it('refuses both forms at once, a deadline in the past, too far ahead, or a timeoutMs out of bounds', async () => {
    const soon = new Date(Date.now() + 60_000).toISOString()
    for (const body of [
      { deadline: soon, timeoutMs: 1_000 },
      { deadline: new Date(Date.now() - 1_000).toISOString() },
      { deadline: new Date(Date.now() + 8 * 86_400_000).toISOString() },
      { deadline: 'tomorrow' },
      { timeoutMs: 0 },
      { timeoutMs: 7 * 86_400_000 + 1 },
      { timeoutMs: 1.5 },
    ]) {
      const r = await create(body)
      expect([JSON.stringify(body), r.status, r.body.error.code]).toEqual([
        JSON.stringify(body),
        400,
        'invalid-request',
      ])
    }
  })

  it('carries the deadline to the view and the claim; timeoutMs counts from creation', async () => {
    const before = Date.now()
    const r = await create({ timeoutMs: 60_000 })
    const view = (await h.call('GET', `/v1/dispatches/${r.body.id}`)).body
    expect(Date.parse(view.deadline)).toBeGreaterThanOrEqual(before + 60_000 - 1_000)
    expect(Date.parse(view.deadline)).toBeLessThanOrEqual(Date.now() + 60_000)
    const c = await claim(h)
    expect(c.dispatch).toMatchObject({ id: r.body.id, deadline: view.deadline })
    const at = new Date(Date.now() + 120_000).toISOString()
    const given = await create({ deadline: at })
    expect((await h.call('GET', `/v1/dispatches/${given.body.id}`)).body.deadline).toBe(at)
  })

  it('never hands out a queued dispatch past its deadline; the sweep ends it expired, reason deadline', async () => {
    const r = await create({ timeoutMs: 1 })
    await h.t.db.orm.execute(sql`SELECT pg_sleep(0.01)`)
    const none = await h.call('POST', '/v1/worker/claim', { role: 'worker', body: { workerId: 'w1' } })
    expect(none.status).toBe(204)
    expect(await sweepLeases(h.t.db.orm)).toEqual([{ id: r.body.id, status: 'expired', reason: 'deadline' }])
    const listed = await h.call('GET', '/v1/dispatches?reason=deadline&status=expired', { role: 'operator' })
    expect(listed.body.items.map((i: { id: string }) => i.id)).toContain(r.body.id)
    const view = (await h.call('GET', `/v1/dispatches/${r.body.id}`)).body
    expect(view.events.map((e: { step: string }) => e.step)).toEqual(['created', 'expired'])
  })

  it('ends a lapsed lease past the deadline expired (reason deadline) rather than queueing it again', async () => {
    const id = await queueDispatch(h, definition(), { timeoutMs: 60_000 })
    await claim(h)
    await h.t.db.orm.execute(sql`UPDATE dispatches SET deadline = now() WHERE id = ${id}`)
    await lapseLease(h, id)
    expect(await sweepLeases(h.t.db.orm)).toEqual([{ id, status: 'expired', reason: 'deadline' }])
  })

  it('an agent stopped at the deadline ends failed, reason deadline — never succeeded', async () => {
    const { id, c } = await running({ timeoutMs: 60_000 })
    const r = await complete(id, c, { exitCode: 0, reason: 'deadline', durationMs: 5 })
    expect(r.body).toEqual({ id, status: 'failed' })
    const listed = await h.call('GET', '/v1/dispatches?reason=deadline&status=failed', { role: 'operator' })
    expect(listed.body.items.map((i: { id: string }) => i.id)).toContain(id)
    const other = await running()
    const refused = await complete(other.id, other.c, { exitCode: 1, reason: 'timeout' })
    expect(refused.status).toBe(400)
  })
})

describe('/openapi.json', () => {
  it('shows the cancel body, the deadline fields and the code cancelled', async () => {
    const doc = (await h.call('GET', '/openapi.json', { role: null })).body
    // a schema, or the component it refers to
    const resolve = (schema: { $ref?: string; properties?: Record<string, unknown> }) =>
      schema.$ref ? doc.components.schemas[schema.$ref.split('/').at(-1) as string] : schema
    const body = (path: string) =>
      resolve(doc.paths[path].post.requestBody.content['application/json'].schema)
    expect(body('/v1/dispatches/{id}/cancel').properties).toHaveProperty('reason')
    expect(doc.paths['/v1/dispatches/{id}/cancel'].post.requestBody.required).toBe(false)
    expect(Object.keys(body('/v1/dispatches').properties)).toEqual(
      expect.arrayContaining(['deadline', 'timeoutMs']),
    )
    const claimed = doc.paths['/v1/worker/claim'].post.responses['200'].content['application/json'].schema
    expect(resolve(resolve(claimed).properties.dispatch).properties).toHaveProperty('deadline')
    const view = doc.paths['/v1/dispatches/{id}'].get.responses['200'].content['application/json'].schema
    expect(resolve(view).properties).toHaveProperty('cancel')
  })
})

describe('heartbeat', () => {
  it('writes the lease only once a third of it has run, and answers it as it stands before', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    const beat = () => h.call('POST', `/v1/dispatches/${id}/heartbeat`, { role: 'worker', body: fenceOf(c) })
    const first = await beat()
    expect(first.body.lease.expiresAt).toBe(c.lease.expiresAt)
    await h.t.db.orm.execute(
      sql`UPDATE dispatches SET lease_expires_at = now() + interval '1 second' WHERE id = ${id}`,
    )
    const renewed = await beat()
    expect(Date.parse(renewed.body.lease.expiresAt)).toBeGreaterThan(Date.now() + 5_000)
  })
})
