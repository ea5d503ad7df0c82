// Creating and cancelling dispatches on a real database, without HTTP: idempotency and the states.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registerSubagent } from '../../../src/coordinator/db/subagents.js'
import { cancelDispatch, createDispatch } from '../../../src/coordinator/dispatch/dispatches.js'
import { storeReport } from '../../../src/coordinator/dispatch/preflight.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { definition, reportFor, workspace } from '../../support/fixtures.js'
import { claimed, fenceOf, queued } from './claimed.js'

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

  it('cancels a queued dispatch, and answers a second cancel the same', async () => {
    const id = await queued(t.db.orm)
    expect(await cancelDispatch(t.db.orm, id)).toEqual({ id, status: 'cancelled' })
    expect(await cancelDispatch(t.db.orm, id)).toEqual({ id, status: 'cancelled' })
  })

  it('cancels a claimed dispatch', async () => {
    const { id } = await claimed(t.db.orm)
    expect(await cancelDispatch(t.db.orm, id)).toEqual({ id, status: 'cancelled' })
  })

  it('refuses a running dispatch with invalid-state', async () => {
    const def = definition()
    const { id, claim } = await claimed(t.db.orm, def)
    await storeReport(t.db.orm, id, { ...fenceOf(claim), report: reportFor(def) })
    await expect(cancelDispatch(t.db.orm, id)).rejects.toMatchObject({
      code: 'invalid-state',
      message: 'a running dispatch cannot be cancelled',
      details: { status: 'running' },
    })
  })

  it('says not-found for a dispatch that does not exist', async () => {
    await expect(cancelDispatch(t.db.orm, randomUUID())).rejects.toMatchObject({ code: 'not-found' })
  })
})
