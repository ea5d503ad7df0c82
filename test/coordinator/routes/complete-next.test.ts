// A completion that asks for the worker's next dispatch (`next`): one request where there were two, the
// completion stored first and the claim the same as POST /v1/worker/claim's.
import { sql } from 'drizzle-orm'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type TestApp, tokens, useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'
import { waitFor } from '../../support/wait.js'

// A dispatch no completion's claim took: queued as it was.
const expectNeverClaimed = async (h: TestApp, id: string) =>
  expect((await h.call('GET', `/v1/dispatches/${id}`, { role: 'operator' })).body).toMatchObject({
    status: 'queued',
    attempt: 0,
  })

describe('a completion with next', () => {
  // the metrics' text rebuilt on every scrape: a claim made with a completion is counted at once
  const h = useTestApp({ metricsCacheMs: 0 })
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
    const claims = async () =>
      Number(
        /^preflight_claim_wait_seconds_count (\d+)$/m.exec(
          await (await h.app.request('/metrics')).text(),
        )?.[1],
      )
    const claimsBefore = await claims()
    const r = await completeWithNext(first, fenceOf(c))
    expect(r.status).toBe(200)
    // counted with the claims, as a claim request is
    expect(await claims()).toBe(claimsBefore + 1)
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
    const gpu = await queueDispatch(h, definition(), { labels: ['gpu'] })
    const r = await completeWithNext(c.dispatch.id, fenceOf(c), { workerId: 'w1', labels: ['linux'] })
    expect(r.body).toEqual({ id: c.dispatch.id, status: 'succeeded' })
    await queueDispatch(h)
    const d = await running()
    const labelled = await completeWithNext(d.dispatch.id, fenceOf(d), { workerId: 'w1', labels: ['gpu'] })
    expect(labelled.body.next.dispatch).toMatchObject({ id: gpu, labels: ['gpu'] })
  })

  it('stores the completion and claims nothing when its worker has gone: nobody would learn of the claim', async () => {
    await queueDispatch(h)
    const c = await running()
    const waiting = await queueDispatch(h)
    const res = await h.app.request(`/v1/dispatches/${c.dispatch.id}/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.worker}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...fenceOf(c), exitCode: 0, next: { workerId: 'w1' } }),
      signal: AbortSignal.abort(),
    })
    expect(await res.json()).toEqual({ id: c.dispatch.id, status: 'succeeded' })
    await expectNeverClaimed(h, waiting)
  })

  it('claims nothing for a retry of a stored completion: its first answer may have been lost with a claim in it', async () => {
    await queueDispatch(h)
    const c = await running()
    const waiting = await queueDispatch(h)
    const first = await h.call('POST', `/v1/dispatches/${c.dispatch.id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), exitCode: 0 },
    })
    expect(first.body).toEqual({ id: c.dispatch.id, status: 'succeeded' })
    const retry = await completeWithNext(c.dispatch.id, fenceOf(c))
    expect(retry.body).toEqual({ id: c.dispatch.id, status: 'succeeded' })
    await expectNeverClaimed(h, waiting)
  })

  it('answers a stored completion without next when its claim fails, never as an error', async () => {
    await queueDispatch(h)
    const c = await running()
    const waiting = await queueDispatch(h)
    // the claim reads the dispatch's definition from subagent_versions; the completion does not
    await h.t.db.orm.execute(sql`ALTER TABLE subagent_versions RENAME TO subagent_versions_away`)
    try {
      const r = await completeWithNext(c.dispatch.id, fenceOf(c))
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ id: c.dispatch.id, status: 'succeeded' })
    } finally {
      await h.t.db.orm.execute(sql`ALTER TABLE subagent_versions_away RENAME TO subagent_versions`)
    }
    await expectNeverClaimed(h, waiting)
  })

  it('claims nothing for a completion the fence refuses', async () => {
    await queueDispatch(h)
    const c = await running()
    const waiting = await queueDispatch(h)
    const r = await completeWithNext(c.dispatch.id, { ...fenceOf(c), leaseToken: 'not-the-token' })
    expect(r.status).toBe(409)
    await expectNeverClaimed(h, waiting)
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

describe('a completion with next past its deadline', () => {
  const h = useTestApp({ requestTimeoutMs: 400 })

  it('claims nothing once its answer went out as 503: nobody would learn of the claim', async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
    await queueDispatch(h)
    const c = await claim(h)
    await h.call('PUT', `/v1/dispatches/${c.dispatch.id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(definition()) },
    })
    const waiting = await queueDispatch(h)
    // the dispatch's row held by another transaction past the completion's deadline
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve
    })
    const holding = h.t.db.orm.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1 FROM dispatches WHERE id = ${c.dispatch.id} FOR UPDATE`)
      locked()
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    })
    await isLocked
    const r = await h.call('POST', `/v1/dispatches/${c.dispatch.id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), exitCode: 0, next: { workerId: 'w1' } },
    })
    expect(r.status).toBe(503)
    await holding
    // the completion went on once the row was let go, and was stored; its claim was not made
    await waitFor(
      async () =>
        (await h.call('GET', `/v1/dispatches/${c.dispatch.id}`, { role: 'operator' })).body.status ===
        'succeeded',
      { what: 'the completion to be stored' },
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    await expectNeverClaimed(h, waiting)
  })
})
