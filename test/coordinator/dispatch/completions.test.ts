// Completing a dispatch on a real database, without HTTP: fenced, in the right state, replayed, refused.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listDispatches } from '../../../src/coordinator/db/dispatch-list.js'
import { completeDispatch } from '../../../src/coordinator/dispatch/completions.js'
import { storeReport } from '../../../src/coordinator/dispatch/preflight.js'
import { claimed, fenceOf, lapse, statusOf } from '../../support/claimed.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { definition, reportFor } from '../../support/fixtures.js'

describe('completeDispatch', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const def = definition()
  const setupFailed = { status: 'setup_failed' as const, reason: 'setup-failed', detail: 'exit 1' }

  // A dispatch whose report answered proceed: the agent may run, and its exit completes it.
  async function running() {
    const { id, claim } = await claimed(t.db.orm, def)
    await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def) })
    return { id, fence: fenceOf(claim) }
  }

  it('ends a running dispatch as succeeded on exit code 0, and failed otherwise', async () => {
    const ok = await running()
    expect((await completeDispatch(t.db.orm, ok.id, { ...ok.fence, exitCode: 0 })).answer).toEqual({
      id: ok.id,
      status: 'succeeded',
    })
    const bad = await running()
    expect((await completeDispatch(t.db.orm, bad.id, { ...bad.fence, exitCode: 2 })).answer.status).toBe(
      'failed',
    )
  })

  const pnpm = {
    observed: { source: 'trace' as const, exec: [{ name: 'pnpm' }], paths: [] },
    undeclared: [
      { kind: 'exec' as const, name: 'pnpm', state: 'missing' as const, searched: '/usr/bin:/bin' },
    ],
  }

  it('gives a failed agent that used an undeclared program that was not there the reason undeclared-requirement', async () => {
    const failed = await running()
    const done = await completeDispatch(t.db.orm, failed.id, { ...failed.fence, exitCode: 127, ...pnpm })
    expect(done.written).toEqual({ status: 'failed', reason: 'undeclared-requirement' })
    const page = await listDispatches(t.db.orm, { limit: 50, reason: 'undeclared-requirement' })
    expect(page.items.map((d) => d.id)).toEqual([failed.id])
    // the same completion again is a retry, answered alike
    expect(
      (await completeDispatch(t.db.orm, failed.id, { ...failed.fence, exitCode: 127, ...pnpm })).answer,
    ).toEqual({
      id: failed.id,
      status: 'failed',
    })
    // an agent that succeeded, or whose undeclared program was there, has no such reason
    const ok = await running()
    expect((await completeDispatch(t.db.orm, ok.id, { ...ok.fence, exitCode: 0, ...pnpm })).written).toEqual({
      status: 'succeeded',
      reason: undefined,
    })
    const present = await running()
    const there = [{ kind: 'exec' as const, name: 'pnpm', state: 'present' as const, path: '/usr/bin/pnpm' }]
    expect(
      (await completeDispatch(t.db.orm, present.id, { ...present.fence, exitCode: 1, undeclared: there }))
        .written,
    ).toEqual({ status: 'failed', reason: undefined })
  })

  it('ends a claimed dispatch as setup_failed', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    const done = await completeDispatch(t.db.orm, id, { ...fenceOf(claim), ...setupFailed })
    expect(done).toEqual({
      answer: { id, status: 'setup_failed' },
      written: { status: 'setup_failed', reason: setupFailed.reason },
    })
    expect(await statusOf(t.db.orm, id)).toBe('setup_failed')
  })

  it('answers a retried completion with the stored status, also after the lease lapsed', async () => {
    const { id, fence } = await running()
    await completeDispatch(t.db.orm, id, { ...fence, exitCode: 0 })
    await lapse(t.db.orm, id)
    // a retry: answered as before, and not counted again (nothing written)
    expect(await completeDispatch(t.db.orm, id, { ...fence, exitCode: 0 })).toEqual({
      answer: { id, status: 'succeeded' },
    })
  })

  it('refuses a different completion with completion-conflict', async () => {
    const { id, fence } = await running()
    await completeDispatch(t.db.orm, id, { ...fence, exitCode: 0 })
    await expect(completeDispatch(t.db.orm, id, { ...fence, exitCode: 1 })).rejects.toMatchObject({
      code: 'completion-conflict',
      details: { status: 'succeeded' },
    })
  })

  it('refuses an agent exit before a report answered proceed with invalid-state', async () => {
    const { id, claim } = await claimed(t.db.orm, def)
    await expect(completeDispatch(t.db.orm, id, { ...fenceOf(claim), exitCode: 0 })).rejects.toMatchObject({
      code: 'invalid-state',
      message:
        'an agent exit needs a stored preflight report that answered proceed (the dispatch is claimed)',
      details: { status: 'claimed' },
    })
  })

  it('refuses a setup failure after the report with invalid-state', async () => {
    const { id, fence } = await running()
    await expect(completeDispatch(t.db.orm, id, { ...fence, ...setupFailed })).rejects.toMatchObject({
      code: 'invalid-state',
      message: 'a setup failure must come before the preflight report (the dispatch is running)',
    })
  })

  it('refuses a completion from a lapsed lease or another token with lease-lost', async () => {
    const lapsed = await running()
    await lapse(t.db.orm, lapsed.id)
    await expect(
      completeDispatch(t.db.orm, lapsed.id, { ...lapsed.fence, exitCode: 0 }),
    ).rejects.toMatchObject({ code: 'lease-lost' })
    const other = await running()
    const fence = { ...other.fence, leaseToken: 'not-the-token' }
    await expect(completeDispatch(t.db.orm, other.id, { ...fence, exitCode: 0 })).rejects.toMatchObject({
      code: 'lease-lost',
      details: { status: 'running', attempt: 1 },
    })
  })

  it('says not-found for a dispatch that does not exist', async () => {
    const { fence } = await running()
    await expect(completeDispatch(t.db.orm, randomUUID(), { ...fence, exitCode: 0 })).rejects.toMatchObject({
      code: 'not-found',
    })
  })
})
