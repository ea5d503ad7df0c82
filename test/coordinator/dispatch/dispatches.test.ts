// Creating and cancelling dispatches on a real database, without HTTP: idempotency and the states.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findDispatch } from '../../../src/coordinator/db/dispatches.js'
import { registerSubagent } from '../../../src/coordinator/db/subagents.js'
import { completeDispatch } from '../../../src/coordinator/dispatch/completions.js'
import {
  cancelDispatch,
  createDispatch,
  retryDispatch,
} from '../../../src/coordinator/dispatch/dispatches.js'
import { storeReport } from '../../../src/coordinator/dispatch/preflight.js'
import { claimed, fenceOf, queued } from '../../support/claimed.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { definition, reportFor, workspace } from '../../support/fixtures.js'

describe('createDispatch', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
    await registerSubagent(t.db.orm, definition())
  })
  afterAll(() => t.drop())

  const opts = { maxAttempts: 3, notify: false }
  const req = (extra = {}) => ({ subagent: definition().name, workspace, ...extra })

  it('queues a dispatch', async () => {
    const { dispatch, created } = await createDispatch(t.db.orm, req(), opts)
    expect(created).toBe(true)
    expect(dispatch.status).toBe('queued')
  })

  it('answers the same request with a used idempotency key with the dispatch it created', async () => {
    const key = randomUUID()
    const first = await createDispatch(t.db.orm, req({ idempotencyKey: key }), opts)
    const again = await createDispatch(t.db.orm, req({ idempotencyKey: key }), opts)
    expect(again).toEqual({ dispatch: first.dispatch, created: false })
  })

  it('refuses a different request with a used idempotency key with idempotency-conflict', async () => {
    const key = randomUUID()
    const first = await createDispatch(t.db.orm, req({ idempotencyKey: key }), opts)
    const other = createDispatch(t.db.orm, req({ idempotencyKey: key, labels: ['gpu'] }), opts)
    await expect(other).rejects.toMatchObject({
      code: 'idempotency-conflict',
      details: { id: first.dispatch.id },
    })
  })

  it('refuses a subagent nobody registered with unknown-subagent', async () => {
    await expect(createDispatch(t.db.orm, req({ subagent: 'nobody' }), opts)).rejects.toMatchObject({
      code: 'unknown-subagent',
      message: 'no subagent named "nobody" is registered',
    })
  })
})

describe('cancelDispatch', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const who = { by: { tokenId: 7, role: 'orchestrator' as const }, reason: 'abandoned task' }

  it('cancels a queued dispatch, and answers a second cancel the same, keeping the first cancel', async () => {
    const id = await queued(t.db.orm)
    const answer = { id, status: 'cancelled' }
    expect(await cancelDispatch(t.db.orm, id, who)).toEqual({ answer, ended: true })
    // the second ends nothing: it is not counted again
    expect(await cancelDispatch(t.db.orm, id, { by: { tokenId: 8, role: 'admin' } })).toEqual({
      answer,
      ended: false,
    })
    expect((await findDispatch(t.db.orm, id))?.cancel).toMatchObject(who)
  })

  it('cancels a claimed dispatch', async () => {
    const { id } = await claimed(t.db.orm)
    expect(await cancelDispatch(t.db.orm, id, who)).toEqual({
      answer: { id, status: 'cancelled' },
      ended: true,
    })
  })

  it('cancels a running dispatch; its worker is told so, and its completion is kept as cancelled', async () => {
    const def = definition()
    const { id, claim } = await claimed(t.db.orm, def)
    await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def) })
    expect(await cancelDispatch(t.db.orm, id, who)).toEqual({
      answer: { id, status: 'cancelled' },
      ended: true,
    })
    const exit = { ...fenceOf(claim), exitCode: 0, durationMs: 5 }
    expect((await completeDispatch(t.db.orm, id, exit)).answer).toEqual({ id, status: 'cancelled' })
    // a retry gets the same answer; a different completion is a conflict
    expect((await completeDispatch(t.db.orm, id, exit)).answer).toEqual({ id, status: 'cancelled' })
    await expect(completeDispatch(t.db.orm, id, { ...exit, exitCode: 1 })).rejects.toMatchObject({
      code: 'completion-conflict',
    })
    const view = await findDispatch(t.db.orm, id)
    expect(view).toMatchObject({
      status: 'cancelled',
      cancel: who,
      completion: { status: 'cancelled', exitCode: 0 },
    })
  })

  it('refuses a cancelled completion from another attempt, and one for a dispatch not cancelled', async () => {
    const def = definition()
    const { id, claim } = await claimed(t.db.orm, def)
    await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def) })
    const had = { ...fenceOf(claim), status: 'cancelled' as const, exitCode: 143 }
    await expect(completeDispatch(t.db.orm, id, had)).rejects.toMatchObject({
      code: 'invalid-state',
      details: { status: 'running' },
    })
    await cancelDispatch(t.db.orm, id, who)
    await expect(completeDispatch(t.db.orm, id, { ...had, leaseToken: 'another' })).rejects.toMatchObject({
      code: 'cancelled',
    })
    expect((await completeDispatch(t.db.orm, id, had)).answer).toEqual({ id, status: 'cancelled' })
  })

  it('refuses a dispatch that ended otherwise with invalid-state and the status it ended with', async () => {
    const def = definition()
    const { id, claim } = await claimed(t.db.orm, def)
    await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def) })
    await completeDispatch(t.db.orm, id, { ...fenceOf(claim), exitCode: 0 })
    await expect(cancelDispatch(t.db.orm, id, who)).rejects.toMatchObject({
      code: 'invalid-state',
      message: 'the dispatch has ended (succeeded) and cannot be cancelled',
      details: { status: 'succeeded' },
    })
  })

  it('says not-found for a dispatch that does not exist', async () => {
    await expect(cancelDispatch(t.db.orm, randomUUID(), who)).rejects.toMatchObject({ code: 'not-found' })
  })
})

describe('retryDispatch', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const opts = { maxAttempts: 3, notify: false }
  const who = { by: { tokenId: 7, role: 'orchestrator' as const } }

  it('queues an ended dispatch again, and answers the same key with that retry', async () => {
    const id = await queued(t.db.orm)
    await cancelDispatch(t.db.orm, id, who)
    const first = await retryDispatch(t.db.orm, id, { idempotencyKey: 'k-1' }, opts)
    expect(first).toEqual({ dispatch: { id: expect.any(String), status: 'queued' }, created: true })
    const again = await retryDispatch(t.db.orm, id, { idempotencyKey: 'k-1' }, opts)
    expect(again).toEqual({ dispatch: first.dispatch, created: false })
    // without a key, each retry is a new dispatch
    const other = await retryDispatch(t.db.orm, id, {}, opts)
    expect(other.dispatch.id).not.toBe(first.dispatch.id)
  })

  it('refuses a dispatch not ended with invalid-state and where it is', async () => {
    const id = await queued(t.db.orm)
    await expect(retryDispatch(t.db.orm, id, {}, opts)).rejects.toMatchObject({
      code: 'invalid-state',
      message: 'the dispatch has not ended (queued): cancel it first, or wait',
      details: { status: 'queued' },
    })
  })

  it('says not-found for a dispatch that does not exist', async () => {
    await expect(retryDispatch(t.db.orm, randomUUID(), {}, opts)).rejects.toMatchObject({ code: 'not-found' })
  })
})
