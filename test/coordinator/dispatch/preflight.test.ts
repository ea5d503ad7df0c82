// Storing a report on a real database, without HTTP: judged, fenced, replayed, refused.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findLatestPreflight } from '../../../src/coordinator/db/preflight.js'
import { storeReport } from '../../../src/coordinator/dispatch/preflight.js'
import { claimed, fenceOf, lapse, statusOf } from '../../support/claimed.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { definition, reportFor } from '../../support/fixtures.js'

describe('storeReport', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const def = definition()

  it('stores a met report, answers proceed and runs the dispatch', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const r = await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def) })
    expect(r.answer).toEqual({ decision: 'proceed', status: 'running' })
    expect(r.stored).toMatchObject({ subagent: def.name, judged: { outcome: 'met' } })
    expect(await statusOf(t.db.orm, id)).toBe('running')
  })

  it('fails the dispatch on an unmet report', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const r = await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def, 'unmet') })
    expect(r.answer).toEqual({ decision: 'abort', status: 'preflight_failed' })
    expect(await statusOf(t.db.orm, id)).toBe('preflight_failed')
  })

  it('answers a retried report with the first answer, and tells nothing was stored', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    await storeReport(t.db.orm, id, req)
    const again = await storeReport(t.db.orm, id, req)
    expect(again).toEqual({ answer: { decision: 'proceed', status: 'running' } })
  })

  it('replays through the read when the claim hint meets a report already stored', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    await storeReport(t.db.orm, id, req)
    const again = await storeReport(t.db.orm, id, req, { contextRequires: def.contextRequires })
    expect(again).toEqual({ answer: { decision: 'proceed', status: 'running' } })
  })

  it('refuses a different report for the same attempt with report-conflict', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def) })
    const other = storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def, 'unmet') })
    await expect(other).rejects.toMatchObject({
      code: 'report-conflict',
      message: 'a different report is already stored for this attempt',
    })
  })

  it('refuses a report from another lease token with lease-lost, storing nothing', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), leaseToken: 'not-the-token', report: reportFor(def) }
    await expect(storeReport(t.db.orm, id, req)).rejects.toMatchObject({
      code: 'lease-lost',
      details: { status: 'claimed', attempt: 1 },
    })
    expect(await findLatestPreflight(t.db.orm, id)).toBeUndefined()
  })

  it('refuses a report after the lease lapsed, also with the claim hint', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    await lapse(t.db.orm, id)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    const hinted = storeReport(t.db.orm, id, req, { contextRequires: def.contextRequires })
    await expect(hinted).rejects.toMatchObject({ code: 'lease-lost' })
    expect(await statusOf(t.db.orm, id)).toBe('claimed')
  })

  it('says not-found for a dispatch that does not exist', async () => {
    const { claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    await expect(storeReport(t.db.orm, randomUUID(), req)).rejects.toMatchObject({ code: 'not-found' })
  })
})
