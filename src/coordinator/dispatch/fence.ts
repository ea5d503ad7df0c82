// Fenced writes: a worker's write holds only while its (attempt, lease token) holds a live lease.
// Every write statement re-checks that fence in its WHERE; what is here decides what a miss means.
import type { Fence, Lease } from '../../contract/index.js'
import type { Orm } from '../db/client.js'
import { findDispatchState } from '../db/dispatches.js'
import { extendLease } from '../db/leases.js'
import { DispatchCode, DispatchError, dispatchNotFound, leaseLost } from './errors.js'

// How often a write looks again after its fence moved between its read and its write.
const MAX_RACES = 3

// Runs `attempt` (read, decide, write) until its write lands. `attempt` answers undefined when its
// write matched nothing — the fence no longer held (a concurrent retry, the sweep, a cancel) — and
// is then run again: its read finds out why, and refuses or replays. A refusal is a throw.
// `what` names the write in the refusal after MAX_RACES misses ("this report").
export async function fencedWrite<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  for (let race = 0; race < MAX_RACES; race++) {
    const done = await attempt()
    if (done !== undefined) return done
  }
  throw new DispatchError(DispatchCode.LeaseLost, `the dispatch kept changing under ${what}`)
}

// Why a fenced write matched nothing, when its statement did not read the dispatch: there is no such
// dispatch, or the lease is no longer the writer's.
export async function refusal(db: Orm, id: string): Promise<DispatchError> {
  const d = await findDispatchState(db, id)
  return d ? leaseLost(d) : dispatchNotFound(id)
}

// Extends a live lease held by the fence.
export async function renewLease(db: Orm, id: string, fence: Fence, leaseMs: number) {
  const row = await extendLease(db, id, fence, leaseMs)
  if (!row) throw await refusal(db, id)
  const lease: Lease = { token: fence.leaseToken, expiresAt: row.expires_at }
  return { status: row.status, lease }
}
