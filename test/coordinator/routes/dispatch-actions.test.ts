// POST /v1/dispatches/{id}/retry: an ended dispatch queued again, as the same definition version on the
// same workspace; refused for one still running, an unknown id, a role other than orchestrator.
// (The cancel's routes: dispatches.test.ts, cancel-deadline.test.ts, ended-metrics.test.ts.)
import { describe, expect, it } from 'vitest'
import { type TestApp, useTestApp } from '../../support/app.js'
import { cancelled, expired, preflightFailed, running } from '../../support/dispatch-states.js'
import { definition } from '../../support/fixtures.js'

const h = useTestApp({ maxAttempts: 1 })
const retry = (id: string, body?: unknown, role: 'orchestrator' | 'operator' | 'worker' = 'orchestrator') =>
  h.call('POST', `/v1/dispatches/${id}/retry`, { role, ...(body === undefined ? {} : { body }) })

describe('POST /v1/dispatches/{id}/retry', () => {
  it('queues a new dispatch of the same definition version, even after a newer one was registered', async () => {
    const def = definition('retry-version')
    const { id } = await preflightFailed(h, { def })
    const newer = await h.call('POST', '/v1/subagents', { body: { ...def, description: 'changed' } })
    expect(newer.body.version).toBe(2)
    const r = await retry(id)
    expect(r.status).toBe(201)
    expect(r.body).toEqual({ id: expect.any(String), status: 'queued' })
    expect(r.body.id).not.toBe(id)
    const view = (await h.call('GET', `/v1/dispatches/${r.body.id}`)).body
    expect(view.subagent).toEqual({ name: 'retry-version', version: 1 })
    expect(view.attempt).toBe(0)
    // its first event names the dispatch it retries
    expect(view.events[0]).toMatchObject({ step: 'created', detail: { retryOf: id } })
    await drain(h)
  })

  it('keeps the workspace, labels, priority and metadata, and a deadline as far off as the first one had', async () => {
    const def = definition('retry-same')
    await h.call('POST', '/v1/subagents', { body: def })
    const workspace = { path: '/srv/work/app', setup: ['npm', 'ci'] }
    const created = await h.call('POST', '/v1/dispatches', {
      body: {
        subagent: def.name,
        workspace,
        labels: ['gpu'],
        priority: 7,
        metadata: { task: 'T-1' },
        timeoutMs: 3_600_000,
      },
    })
    const id = created.body.id as string
    await h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator' })
    const before = Date.now()
    const r = await retry(id)
    expect(r.status).toBe(201)
    const view = (await h.call('GET', `/v1/dispatches/${r.body.id}`)).body
    expect(view).toMatchObject({ workspace, labels: ['gpu'], priority: 7, metadata: { task: 'T-1' } })
    expect(view.idempotencyKey).toBeUndefined()
    const left = Date.parse(view.deadline) - before
    expect(left).toBeGreaterThan(3_600_000 - 60_000)
    expect(left).toBeLessThanOrEqual(3_600_000 + 60_000)
    await drain(h)
  })

  it('retries any ended dispatch: expired and cancelled too', async () => {
    for (const ended of [await expired(h, { fault: 'git died' }), await cancelled(h)]) {
      const r = await retry(ended.id)
      expect(r.status).toBe(201)
      await drain(h)
    }
  })

  it('refuses a dispatch still running with 409 invalid-state, and says where it is', async () => {
    const { id } = await running(h)
    const r = await retry(id)
    expect(r.status).toBe(409)
    expect(r.body.error).toMatchObject({ code: 'invalid-state', details: { status: 'running' } })
    expect(r.body.error.message).toContain('has not ended')
    await drain(h)
  })

  it('refuses a queued dispatch with 409 invalid-state', async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
    const queued = await h.call('POST', '/v1/dispatches', {
      body: { subagent: definition().name, workspace: { path: '/w' } },
    })
    const r = await retry(queued.body.id)
    expect(r.body.error).toMatchObject({ code: 'invalid-state', details: { status: 'queued' } })
    await drain(h)
  })

  it('answers an unknown dispatch with 404 not-found, and an id that is none with 400', async () => {
    const r = await retry('00000000-0000-4000-8000-000000000000')
    expect(r.status).toBe(404)
    expect(r.body.error.code).toBe('not-found')
    expect((await retry('not-a-uuid')).status).toBe(400)
  })

  it('answers the same idempotencyKey with the retry it created (200), and one used elsewhere with 409', async () => {
    const { id } = await preflightFailed(h, { def: definition('retry-key') })
    const first = await retry(id, { idempotencyKey: 'ci-7:retry-1' })
    expect(first.status).toBe(201)
    const again = await retry(id, { idempotencyKey: 'ci-7:retry-1' })
    expect(again).toMatchObject({ status: 200, body: first.body })
    const other = await cancelled(h, definition('retry-key-other'))
    const clash = await retry(other.id, { idempotencyKey: 'ci-7:retry-1' })
    expect(clash.status).toBe(409)
    expect(clash.body.error).toMatchObject({ code: 'idempotency-conflict', details: { id: first.body.id } })
    await drain(h)
  })

  it('refuses a key that named the ended dispatch itself: it is no retry of it', async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
    const keyed = await h.call('POST', '/v1/dispatches', {
      body: { subagent: definition().name, workspace: { path: '/w' }, idempotencyKey: 'own-key' },
    })
    await h.call('POST', `/v1/dispatches/${keyed.body.id}/cancel`, { role: 'orchestrator' })
    const r = await retry(keyed.body.id, { idempotencyKey: 'own-key' })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('idempotency-conflict')
  })

  it('takes an empty body, also sent as JSON, and refuses a field it does not know', async () => {
    const { id } = await cancelled(h)
    const empty = await h.call('POST', `/v1/dispatches/${id}/retry`, { role: 'orchestrator', raw: '' })
    expect(empty.status).toBe(201)
    const unknown = await retry(id, { reason: 'again' })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error.code).toBe('invalid-request')
    await drain(h)
  })

  it.each(['operator', 'worker'] as const)('refuses a token of the role %s with 403', async (role) => {
    const { id } = await cancelled(h)
    const r = await retry(id, undefined, role)
    expect(r.status).toBe(403)
    expect(r.body.error.code).toBe('forbidden')
  })

  it('is in the OpenAPI document, as retryDispatch', async () => {
    const doc = (await h.call('GET', '/openapi.json', { role: null })).body
    const op = doc.paths['/v1/dispatches/{id}/retry'].post
    expect(op.operationId).toBe('retryDispatch')
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '201', '403', '404', '409']))
  })
})

// Cancels everything still queued, so that the next test's claim takes its own dispatch.
async function drain(app: TestApp) {
  const page = await app.call('GET', '/v1/dispatches?status=queued&limit=500')
  for (const d of page.body.items as { id: string }[])
    await app.call('POST', `/v1/dispatches/${d.id}/cancel`, { role: 'orchestrator' })
}
