// Storing a report on a real database, without HTTP: judged, fenced, replayed, refused.
import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findLatestPreflight } from '../../../src/coordinator/db/preflight.js'
import { completeDispatch } from '../../../src/coordinator/dispatch/completions.js'
import { cancelDispatch } from '../../../src/coordinator/dispatch/dispatches.js'
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

  it('answers a retry with the status its report set, even after the dispatch moved on', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    await storeReport(t.db.orm, id, req)
    await completeDispatch(t.db.orm, id, { ...fenceOf(claim), exitCode: 0 })
    expect(await statusOf(t.db.orm, id)).toBe('succeeded')
    expect(await storeReport(t.db.orm, id, req)).toEqual({
      answer: { decision: 'proceed', status: 'running' },
    })
  })

  it('answers a retried unmet report with abort and the status it set', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def, 'unmet') }
    await storeReport(t.db.orm, id, req)
    expect(await storeReport(t.db.orm, id, req)).toEqual({
      answer: { decision: 'abort', status: 'preflight_failed' },
    })
  })

  // The hint is what the claim answered; one that differs from the pinned definition shows which judged.
  it('writes first with the claim hint, judged against its requirements, and tells what it stored', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    const r = await storeReport(t.db.orm, id, req, { contextRequires: undefined })
    // nothing declared in the hint: every reported result is extra, the report incomplete
    expect(r.answer).toEqual({ decision: 'abort', status: 'preflight_failed' })
    expect(r.stored).toMatchObject({
      subagent: def.name,
      judged: { outcome: 'unmet', decision: 'abort', reason: 'report-incomplete' },
    })
    expect(await statusOf(t.db.orm, id)).toBe('preflight_failed')
  })

  it('stores with a claim hint that matches the definition, as without one', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    const r = await storeReport(t.db.orm, id, req, { contextRequires: def.contextRequires })
    expect(r.answer).toEqual({ decision: 'proceed', status: 'running' })
    expect(r.stored).toMatchObject({ subagent: def.name, judged: { outcome: 'met', decision: 'proceed' } })
    expect(await statusOf(t.db.orm, id)).toBe('running')
  })

  // with the claim hint, the write matches nothing and the read after it explains why
  it('refuses a report from another lease token with lease-lost, with the claim hint or without, storing nothing', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), leaseToken: 'not-the-token', report: reportFor(def) }
    const refused = { code: 'lease-lost', details: { status: 'claimed', attempt: 1 } }
    await expect(storeReport(t.db.orm, id, req)).rejects.toMatchObject(refused)
    const hinted = storeReport(t.db.orm, id, req, { contextRequires: def.contextRequires })
    await expect(hinted).rejects.toMatchObject(refused)
    expect(await findLatestPreflight(t.db.orm, id)).toBeUndefined()
  })

  it('refuses a report for another attempt with lease-lost, storing nothing', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), attempt: 2, report: reportFor(def) }
    await expect(storeReport(t.db.orm, id, req)).rejects.toMatchObject({
      code: 'lease-lost',
      message: 'this lease no longer holds the dispatch',
      details: { status: 'claimed', attempt: 1 },
    })
    expect(await findLatestPreflight(t.db.orm, id)).toBeUndefined()
  })

  it('refuses a report after the lease lapsed, also with the claim hint', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    await lapse(t.db.orm, id)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    const refused = {
      code: 'lease-lost',
      message: 'this lease no longer holds the dispatch',
      details: { status: 'claimed', attempt: 1 },
    }
    await expect(storeReport(t.db.orm, id, req)).rejects.toMatchObject(refused)
    const hinted = storeReport(t.db.orm, id, req, { contextRequires: def.contextRequires })
    await expect(hinted).rejects.toMatchObject(refused)
    expect(await statusOf(t.db.orm, id)).toBe('claimed')
    expect(await findLatestPreflight(t.db.orm, id)).toBeUndefined()
  })

  it('refuses a report for a dispatch cancelled before it came, its lease still running', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    await cancelDispatch(t.db.orm, id, { by: { tokenId: 1, role: 'admin' } })
    const req = { ...fenceOf(claim), report: reportFor(def) }
    await expect(storeReport(t.db.orm, id, req)).rejects.toMatchObject({
      code: 'cancelled',
      details: { status: 'cancelled', attempt: 1 },
    })
    expect(await findLatestPreflight(t.db.orm, id)).toBeUndefined()
  })

  // A trigger that skips every update of the dispatch stands in for writers that keep moving its fence
  // between this call's read and its write.
  it('gives up with lease-lost when the dispatch changes under each of its writes', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    await t.db.orm.execute(
      sql.raw(`CREATE FUNCTION test_skip_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
               CREATE TRIGGER test_skip_update BEFORE UPDATE ON dispatches FOR EACH ROW
                 WHEN (OLD.id = '${id}') EXECUTE FUNCTION test_skip_update()`),
    )
    try {
      await expect(storeReport(t.db.orm, id, req)).rejects.toMatchObject({
        code: 'lease-lost',
        message: 'the dispatch kept changing under this report',
      })
    } finally {
      await t.db.orm.execute(
        sql.raw('DROP TRIGGER test_skip_update ON dispatches; DROP FUNCTION test_skip_update()'),
      )
    }
    expect(await findLatestPreflight(t.db.orm, id)).toBeUndefined()
  })

  it('says not-found for a dispatch that does not exist', async () => {
    const { claim } = await claimed(t.db.orm, def)
    const req = { ...fenceOf(claim), report: reportFor(def) }
    await expect(storeReport(t.db.orm, randomUUID(), req)).rejects.toMatchObject({ code: 'not-found' })
    const hinted = storeReport(t.db.orm, randomUUID(), req, { contextRequires: def.contextRequires })
    await expect(hinted).rejects.toMatchObject({ code: 'not-found' })
  })
})
