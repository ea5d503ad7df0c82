// Dispatches in a given state for the dispatch/ tests, made through db/ and dispatch/ — no HTTP.
import { sql } from 'drizzle-orm'
import type { ClaimResponse } from '../../src/contract/index.js'
import { type Orm, one } from '../../src/coordinator/db/client.js'
import { claimNext } from '../../src/coordinator/db/leases.js'
import { registerSubagent } from '../../src/coordinator/db/subagents.js'
import { createDispatch } from '../../src/coordinator/dispatch/dispatches.js'
import { definition, workspace } from './fixtures.js'

export const LEASE_MS = 60_000

// Registers the definition (when new) and queues one dispatch of it; returns its id.
export async function queued(db: Orm, def = definition()): Promise<string> {
  await registerSubagent(db, def)
  const { dispatch } = await createDispatch(
    db,
    { subagent: def.name, workspace },
    { maxAttempts: 3, notify: false },
  )
  return dispatch.id
}

// A dispatch claimed by worker w1, and the claim (with its fence).
export async function claimed(db: Orm, def = definition()): Promise<{ id: string; claim: ClaimResponse }> {
  const id = await queued(db, def)
  const claim = await claimNext(db, { workerId: 'w1' }, LEASE_MS)
  if (claim?.dispatch.id !== id) throw new Error('the test dispatch was not the one claimed')
  return { id, claim }
}

export const fenceOf = (c: ClaimResponse) => ({ attempt: c.dispatch.attempt, leaseToken: c.lease.token })

export async function statusOf(db: Orm, id: string): Promise<string | undefined> {
  return (await one<{ status: string }>(db, sql`SELECT status FROM dispatches WHERE id = ${id}`))?.status
}

// Makes the lease run out now (no sleeping).
export async function lapse(db: Orm, id: string): Promise<void> {
  await db.execute(sql`UPDATE dispatches SET lease_expires_at = now() - interval '1 second' WHERE id = ${id}`)
}
