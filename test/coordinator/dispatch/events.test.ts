// A worker's steps on a real database, without HTTP: fenced, bounded, and a retry answered from the store.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appendWorkerEvent } from '../../../src/coordinator/dispatch/events.js'
import { claimed, fenceOf, lapse } from '../../support/claimed.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'

describe('appendWorkerEvent', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const limits = { perAttempt: 2, detailBytes: 64 }

  it('appends a step of the lease holder', async () => {
    const { id, claim } = await claimed(t.db.orm)
    const e = await appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'setup', { ok: true }, limits)
    expect(e).toMatchObject({ step: 'setup', attempt: 1 })
  })

  it('answers a retried step with the stored event, also at the limit', async () => {
    const { id, claim } = await claimed(t.db.orm)
    const first = await appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'setup', undefined, limits)
    await appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'verify', undefined, limits)
    expect(await appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'setup', undefined, limits)).toEqual(first)
  })

  it('refuses a step past the events of an attempt with event-limit', async () => {
    const { id, claim } = await claimed(t.db.orm)
    await appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'setup', undefined, limits)
    await appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'verify', undefined, limits)
    await expect(
      appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'agent', undefined, limits),
    ).rejects.toMatchObject({ code: 'event-limit', details: { limit: 'events-per-attempt', max: 2 } })
  })

  it('refuses a detail past the bytes of the dispatch with event-limit', async () => {
    const { id, claim } = await claimed(t.db.orm)
    const big = { tail: 'x'.repeat(80) }
    await expect(appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'setup', big, limits)).rejects.toMatchObject(
      { code: 'event-limit', details: { limit: 'detail-bytes', max: 64, used: 0 } },
    )
  })

  it('refuses a step from a lapsed lease with lease-lost, and of an unknown dispatch with not-found', async () => {
    const { id, claim } = await claimed(t.db.orm)
    await lapse(t.db.orm, id)
    await expect(
      appendWorkerEvent(t.db.orm, id, fenceOf(claim), 'setup', undefined, limits),
    ).rejects.toMatchObject({ code: 'lease-lost' })
    await expect(
      appendWorkerEvent(t.db.orm, randomUUID(), fenceOf(claim), 'setup', undefined, limits),
    ).rejects.toMatchObject({ code: 'not-found' })
  })
})
