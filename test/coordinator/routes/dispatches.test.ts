import { beforeAll, describe, expect, it } from 'vitest'
import { type TestApp, useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor, workspace } from '../../support/fixtures.js'

describe('dispatches', () => {
  const h = useTestApp()
  beforeAll(async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
  })

  const create = (body: Record<string, unknown>) =>
    h.call('POST', '/v1/dispatches', {
      role: 'orchestrator',
      body: { subagent: 'frontend-fixer', workspace, ...body },
    })

  it('queues a dispatch with 201 and shows it queued at the latest version', async () => {
    const r = await create({})
    expect(r.status).toBe(201)
    expect(r.body).toEqual({ id: expect.any(String), status: 'queued' })
    const view = await h.call('GET', `/v1/dispatches/${r.body.id}`)
    expect(view.body).toMatchObject({
      status: 'queued',
      attempt: 0,
      subagent: { name: 'frontend-fixer', version: 1 },
      workspace,
    })
    expect(view.body.events.map((e: { step: string }) => e.step)).toEqual(['created'])
  })

  it('answers 200 and the same dispatch for a repeated idempotencyKey', async () => {
    const first = await create({ idempotencyKey: 'k-repeat' })
    const again = await create({ idempotencyKey: 'k-repeat' })
    expect(again.status).toBe(200)
    expect(again.body.id).toBe(first.body.id)
  })

  it('creates one dispatch under concurrent identical requests', async () => {
    const replies = await Promise.all(Array.from({ length: 10 }, () => create({ idempotencyKey: 'k-race' })))
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1)
    expect(replies.filter((r) => r.status === 200)).toHaveLength(9)
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1)
  })

  it('refuses a reused idempotencyKey with a different request with 409', async () => {
    await create({ idempotencyKey: 'k-other' })
    const r = await create({
      idempotencyKey: 'k-other',
      workspace: { repo: 'https://elsewhere.invalid/x.git' },
    })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('idempotency-conflict')
  })

  it('refuses an unknown subagent with 422', async () => {
    const r = await create({ subagent: 'nobody' })
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('unknown-subagent')
  })

  it('refuses a workspace with neither repo nor path', async () => {
    const r = await create({ workspace: { ref: 'main' } })
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid-request')
  })

  it('refuses a repo or ref that git would read as an option', async () => {
    expect((await create({ workspace: { repo: '--upload-pack=touch /tmp/x' } })).status).toBe(400)
    expect((await create({ workspace: { repo: 'r', ref: '-b' } })).status).toBe(400)
  })

  it('refuses a repo URL with a password or token with 400, and never echoes it', async () => {
    for (const repo of [
      'https://x-access-token:s3cret-1@github.com/a/b.git',
      'https://s3cret-2@github.com/a/b',
    ]) {
      const r = await create({ workspace: { repo }, idempotencyKey: `k-${repo}` })
      expect(r.status).toBe(400)
      expect(r.body.error.code).toBe('invalid-request')
      expect(r.body.error.message).toContain('--git-credentials')
      expect(JSON.stringify(r.body)).not.toMatch(/s3cret/)
    }
  })

  it('answers 404 for an unknown dispatch id', async () => {
    const r = await h.call('GET', '/v1/dispatches/00000000-0000-4000-8000-000000000000')
    expect(r.status).toBe(404)
    expect(r.body.error.code).toBe('not-found')
  })

  it('cancels a queued dispatch, and answers the same to a repeated cancel', async () => {
    const { body } = await create({})
    const r = await h.call('POST', `/v1/dispatches/${body.id}/cancel`, { role: 'orchestrator' })
    expect(r.body).toEqual({ id: body.id, status: 'cancelled' })
    const again = await h.call('POST', `/v1/dispatches/${body.id}/cancel`, { role: 'orchestrator' })
    expect(again.status).toBe(200)
    expect(again.body.status).toBe('cancelled')
  })

  it('cancels a claimed dispatch so that its worker is told, with the code cancelled', async () => {
    await drainQueue(h)
    const id = await queueDispatch(h)
    const c = await claim(h)
    await h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator' })
    const hb = await h.call('POST', `/v1/dispatches/${id}/heartbeat`, { role: 'worker', body: fenceOf(c) })
    expect(hb.status).toBe(409)
    expect(hb.body.error).toMatchObject({ code: 'cancelled', details: { status: 'cancelled', attempt: 1 } })
  })

  it('cancels a running dispatch, and refuses one that ended otherwise with 409 and its status', async () => {
    await drainQueue(h)
    const id = await queueDispatch(h)
    const c = await claim(h)
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(definition()) },
    })
    const r = await h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator' })
    expect(r).toMatchObject({ status: 200, body: { id, status: 'cancelled' } })
    await drainQueue(h)
    const done = await queueDispatch(h)
    const d = await claim(h)
    await h.call('PUT', `/v1/dispatches/${done}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(d), report: reportFor(definition()) },
    })
    await h.call('POST', `/v1/dispatches/${done}/complete`, {
      role: 'worker',
      body: { ...fenceOf(d), exitCode: 1 },
    })
    const late = await h.call('POST', `/v1/dispatches/${done}/cancel`, { role: 'orchestrator' })
    expect(late.status).toBe(409)
    expect(late.body.error).toMatchObject({ code: 'invalid-state', details: { status: 'failed' } })
  })

  it("keeps a failed agent's output tail with its completion and answers it as completion.detail", async () => {
    await drainQueue(h)
    const id = await queueDispatch(h)
    const c = await claim(h)
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(definition()) },
    })
    const exit = { ...fenceOf(c), exitCode: 3, durationMs: 40, detail: 'to stdout\npanic' }
    const complete = (body: Record<string, unknown>) =>
      h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })
    expect(await complete(exit)).toMatchObject({ status: 200, body: { id, status: 'failed' } })
    const view = await h.call('GET', `/v1/dispatches/${id}`)
    expect(view.body.completion).toEqual({
      status: 'failed',
      exitCode: 3,
      durationMs: 40,
      detail: 'to stdout\npanic',
      at: expect.any(String),
    })
    // the tail is part of the completion: a retry sends the same, another tail is another completion
    expect(await complete(exit)).toMatchObject({ status: 200, body: { id, status: 'failed' } })
    const other = await complete({ ...exit, detail: 'something else' })
    expect(other).toMatchObject({ status: 409, body: { error: { code: 'completion-conflict' } } })
  })
})

// Claims everything queued so far, so the next claim takes the next dispatch queued.
async function drainQueue(h: TestApp) {
  while (
    (await h.call('POST', '/v1/worker/claim', { role: 'worker', body: { workerId: 'drain' } })).status === 200
  ) {}
}
