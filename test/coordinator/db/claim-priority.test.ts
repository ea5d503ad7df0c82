// The claim statement itself: the highest priority first, then the oldest; a dispatch queued longer than
// the aging bound before every newer one, whatever their priority; labels still decide who may take one.
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Orm } from '../../../src/coordinator/db/client.js'
import { claimNext, claimStatement } from '../../../src/coordinator/db/leases.js'
import { registerSubagent } from '../../../src/coordinator/db/subagents.js'
import { createDispatch } from '../../../src/coordinator/dispatch/dispatches.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { definition, workspace } from '../../support/fixtures.js'

const AGING_MS = 60_000
let t: TestDatabase
let db: Orm

beforeAll(async () => {
  t = await createTestDatabase()
  db = t.db.orm
  await registerSubagent(db, definition())
})
afterAll(() => t.drop())
// each test starts from an empty queue
beforeEach(async () => {
  await db.execute(sql`DELETE FROM dispatches`)
})

// Queues a dispatch of `priority` created `ageMs` ago; returns its id.
async function queue(priority: number, ageMs = 0, labels?: string[]): Promise<string> {
  const { dispatch } = await createDispatch(
    db,
    { subagent: definition().name, workspace, priority, ...(labels ? { labels } : {}) },
    { maxAttempts: 3, notify: false },
  )
  if (ageMs > 0)
    await db.execute(
      sql`UPDATE dispatches SET created_at = now() - make_interval(secs => ${ageMs / 1000}::double precision)
          WHERE id = ${dispatch.id}`,
    )
  return dispatch.id
}

const next = async (labels?: string[]) =>
  (await claimNext(db, { workerId: 'w', labels }, 60_000, AGING_MS))?.dispatch

async function claimAll(labels?: string[]): Promise<string[]> {
  const ids: string[] = []
  for (let d = await next(labels); d; d = await next(labels)) ids.push(d.id)
  return ids
}

describe('the claim order', () => {
  it('takes the highest priority first, then the oldest', async () => {
    const low = await queue(-5, 3_000)
    const zeroOld = await queue(0, 2_000)
    const zeroNew = await queue(0, 1_000)
    const high = await queue(10)
    const top = await queue(100)
    expect(await claimAll()).toEqual([top, high, zeroOld, zeroNew, low])
  })

  it('answers the priority in the claim', async () => {
    await queue(7)
    expect((await next())?.priority).toBe(7)
  })

  it('takes a dispatch queued longer than the aging bound before newer ones of any priority', async () => {
    const high = await queue(100)
    const agedLow = await queue(-100, AGING_MS + 5_000)
    const agedOlder = await queue(-50, AGING_MS + 10_000)
    const young = await queue(0, AGING_MS - 10_000)
    // the aged ones oldest first, whatever their priority; then the rest by priority
    expect(await claimAll()).toEqual([agedOlder, agedLow, high, young])
  })

  it('passes over dispatches whose labels the worker lacks, aged or not', async () => {
    const agedGpu = await queue(0, AGING_MS * 2, ['gpu'])
    const highGpu = await queue(50, 0, ['gpu'])
    const plain = await queue(-1)
    const plainHigh = await queue(1, 0, ['linux'])
    expect(await claimAll(['linux'])).toEqual([plainHigh, plain])
    expect(await claimAll(['gpu'])).toEqual([agedGpu, highGpu])
  })

  it('skips a dispatch another claim holds, in either walk', async () => {
    const aged = await queue(0, AGING_MS * 2)
    const high = await queue(9)
    const low = await queue(1)
    // two claims at once: each gets its own, the aged one first
    const [a, b] = await Promise.all([next(), next()])
    expect(new Set([a?.id, b?.id])).toEqual(new Set([aged, high]))
    expect(await claimAll()).toEqual([low])
  })
})

// postgres.js keeps one plan per statement and connection, made from what the tables held then; the
// claim's once joined the claimed row by a hash over a scan of every dispatch, and kept that plan while
// the queue grew (a claim a cycle read every dispatch in the cycle benchmark).
describe('the plan a connection keeps for the claim', () => {
  it('updates the claimed row by its key, never by a scan of every dispatch', async () => {
    // the text and values the coordinator sends
    const { text, values: params } = claimStatement(
      { workerId: 'w-plan', labels: ['gpu'] },
      60_000,
      AGING_MS,
      'token',
    )
    const literal = (v: unknown) =>
      typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`
    const admin = postgres(t.url as string, { max: 1, onnotice: () => {} })
    try {
      // the plan made once for every parameter, as a connection keeps after a few runs
      await admin.unsafe('SET plan_cache_mode = force_generic_plan')
      await admin.unsafe(`PREPARE claim_plan AS ${text}`)
      const plan = (await admin.unsafe(`EXPLAIN EXECUTE claim_plan(${params.map(literal).join(', ')})`))
        .map((row) => row['QUERY PLAN'])
        .join('\n')
      expect(plan).toMatch(/Index Scan using dispatches_pkey/)
      expect(plan).not.toMatch(/Seq Scan on dispatches/)
    } finally {
      await admin.end({ timeout: 5 })
    }
  })
})
