// A completion that asks for the worker's next dispatch (`next`): one request where there were two, the
// completion stored first and the claim the same as POST /v1/worker/claim's.
import { sql } from 'drizzle-orm'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'

describe('a completion with next', () => {
  const h = useTestApp()
  beforeAll(async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
  })
  beforeEach(async () => {
    await h.t.db.orm.execute(sql`DELETE FROM dispatches`)
  })

  async function running(workerId = 'w1') {
    const c = await claim(h, workerId)
    const put = await h.call('PUT', `/v1/dispatches/${c.dispatch.id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(definition()) },
    })
    expect(put.body.decision).toBe('proceed')
    return c
  }

  const completeWithNext = (id: string, fence: object, next: object = { workerId: 'w1' }) =>
    h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fence, exitCode: 0, next },
    })

  it('stores the completion and answers the next dispatch claimed, as a claim would', async () => {
    const first = await queueDispatch(h)
    const c = await running()
    expect(c.dispatch.id).toBe(first)
    const second = await queueDispatch(h)
    const r = await completeWithNext(first, fenceOf(c))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: first, status: 'succeeded' })
    expect(r.body.next.dispatch).toMatchObject({ id: second, attempt: 1 })
    expect(r.body.next.subagent).toEqual(definition())
    const view = (await h.call('GET', `/v1/dispatches/${first}`, { role: 'operator' })).body
    // `next` is the request's, not the completion's: it is not stored with it
    expect(view.completion).not.toHaveProperty('next')
    expect(view.completion).toMatchObject({ status: 'succeeded', exitCode: 0 })
    const claimed = (await h.call('GET', `/v1/dispatches/${second}`, { role: 'operator' })).body
    expect(claimed).toMatchObject({ status: 'claimed', attempt: 1 })
    // the claim it answered fences the next dispatch's writes: its report is checked against the definition
    const put = await h.call('PUT', `/v1/dispatches/${second}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(r.body.next), report: reportFor(definition()) },
    })
    expect(put.body).toEqual({ decision: 'proceed', status: 'running' })
  })

  it('answers without next when nothing can be claimed, and keeps the labels of the claim', async () => {
    await queueDispatch(h)
    const c = await running()
    await queueDispatch(h, definition(), { labels: ['gpu'] })
    const r = await completeWithNext(c.dispatch.id, fenceOf(c), { workerId: 'w1', labels: ['linux'] })
    expect(r.body).toEqual({ id: c.dispatch.id, status: 'succeeded' })
    const gpu = await completeWithNext(c.dispatch.id, fenceOf(c), { workerId: 'w1', labels: ['gpu'] })
    // a retry of the stored completion is answered the same, and claims like any claim
    expect(gpu.body).toMatchObject({ id: c.dispatch.id, status: 'succeeded' })
    expect(gpu.body.next.dispatch.labels).toEqual(['gpu'])
  })

  it('claims nothing for a completion the fence refuses', async () => {
    await queueDispatch(h)
    const c = await running()
    const waiting = await queueDispatch(h)
    const r = await completeWithNext(c.dispatch.id, { ...fenceOf(c), leaseToken: 'not-the-token' })
    expect(r.status).toBe(409)
    const left = (await h.call('GET', `/v1/dispatches/${waiting}`, { role: 'operator' })).body
    expect(left.status).toBe('queued')
  })

  it('refuses a next that is not a claim request, and stores nothing', async () => {
    await queueDispatch(h)
    const c = await running()
    const r = await completeWithNext(c.dispatch.id, fenceOf(c), { workerId: 'w1', waitMs: 1000 })
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid-request')
    const view = (await h.call('GET', `/v1/dispatches/${c.dispatch.id}`, { role: 'operator' })).body
    expect(view.status).toBe('running')
  })
})
