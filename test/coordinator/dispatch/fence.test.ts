// The fence helpers on a real database, without HTTP: the bounded retry, why a write matched nothing,
// and renewing a lease.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DispatchError } from '../../../src/coordinator/dispatch/errors.js'
import { fencedWrite, refusal, renewLease } from '../../../src/coordinator/dispatch/fence.js'
import { claimed, fenceOf, LEASE_MS, lapse } from '../../support/claimed.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'

describe('fencedWrite', () => {
  it('runs the attempt again after a write that matched nothing, and answers the one that landed', async () => {
    let calls = 0
    const answer = await fencedWrite('this test write', async () => (++calls < 3 ? undefined : 'landed'))
    expect(answer).toBe('landed')
    expect(calls).toBe(3)
  })

  it('gives up with lease-lost after three writes that matched nothing', async () => {
    let calls = 0
    const miss = fencedWrite('this test write', async () => {
      calls++
      return undefined
    })
    await expect(miss).rejects.toMatchObject({
      code: 'lease-lost',
      message: 'the dispatch kept changing under this test write',
    })
    expect(calls).toBe(3)
  })

  it('passes a refusal through at once', async () => {
    let calls = 0
    const refused = fencedWrite('this test write', async () => {
      calls++
      throw new DispatchError('not-found', 'gone')
    })
    await expect(refused).rejects.toMatchObject({ code: 'not-found' })
    expect(calls).toBe(1)
  })
})

describe('refusal and renewLease', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  it('says not-found for a dispatch that does not exist', async () => {
    const id = randomUUID()
    expect(await refusal(t.db.orm, id)).toMatchObject({
      code: 'not-found',
      message: `dispatch ${id} not found`,
    })
  })

  it('says lease-lost with the current state for a dispatch that exists', async () => {
    const { id } = await claimed(t.db.orm)
    expect(await refusal(t.db.orm, id)).toMatchObject({
      code: 'lease-lost',
      details: { status: 'claimed', attempt: 1 },
    })
  })

  it('renews a live lease held by the fence', async () => {
    const { id, claim } = await claimed(t.db.orm)
    const renewed = await renewLease(t.db.orm, id, fenceOf(claim), LEASE_MS)
    expect(renewed.status).toBe('claimed')
    expect(renewed.lease.token).toBe(claim.lease.token)
    expect(Date.parse(renewed.lease.expiresAt)).toBeGreaterThanOrEqual(Date.parse(claim.lease.expiresAt))
  })

  it('refuses to renew a lapsed lease', async () => {
    const { id, claim } = await claimed(t.db.orm)
    await lapse(t.db.orm, id)
    await expect(renewLease(t.db.orm, id, fenceOf(claim), LEASE_MS)).rejects.toMatchObject({
      code: 'lease-lost',
    })
  })

  it('refuses to renew with another lease token', async () => {
    const { id, claim } = await claimed(t.db.orm)
    const fence = { ...fenceOf(claim), leaseToken: 'not-the-token' }
    await expect(renewLease(t.db.orm, id, fence, LEASE_MS)).rejects.toMatchObject({ code: 'lease-lost' })
  })
})
