// Completions: read the dispatch for one, and write one behind the fence.
import { sql } from 'drizzle-orm'
import type { Completion, DispatchStatus, Fence } from '../../contract/index.js'
import { type Orm, one, PREPARED } from './client.js'
import type { dispatches, SqlRow } from './schema.js'
import { event, insertReasons, iso, jsonb } from './sql.js'

export type CompletionRead = Pick<
  SqlRow<typeof dispatches>,
  'status' | 'attempt' | 'lease_token' | 'completion'
> & {
  // the lease has not run out
  live: boolean
}

// The dispatch as a completion needs it: the fence, the state, and the completion already stored.
export async function readForCompletion(db: Orm, id: string) {
  return one<CompletionRead>(
    db,
    sql`SELECT status, attempt, lease_token, completion, coalesce(lease_expires_at > now(), false) AS live
        FROM dispatches WHERE id = ${id}`,
    PREPARED,
  )
}

// Writes status, completion, event and the reasons it ended for in one statement whose WHERE checks the
// fence, the state the completion needs (`required`) and that none is stored yet; false when it matched nothing.
// A cancelled dispatch has ended already: what its worker had is kept without a live lease, and its
// ended_at stays (the endings follow it from there).
export async function writeCompletion(
  db: Orm,
  id: string,
  fence: Fence,
  required: DispatchStatus,
  completion: Omit<Completion, 'at'>,
  reasons: readonly string[],
): Promise<boolean> {
  const done = await one<{ id: string }>(
    db,
    sql`WITH d AS (
          UPDATE dispatches SET status = ${completion.status}, updated_at = now(), ended_at = coalesce(ended_at, now()),
                 completion = ${jsonb(completion)} || jsonb_build_object('at', ${iso('now()')}),
                 events = events || ${event('completed', fence.attempt, jsonb({ status: completion.status }))}
          WHERE id = ${id} AND attempt = ${fence.attempt} AND lease_token = ${fence.leaseToken}
            AND status = ${required} AND (status = 'cancelled' OR lease_expires_at > now()) AND completion IS NULL
          RETURNING id, status, created_at, subagent_name, worker_id
        ), why AS (${insertReasons('d', reasons)})
        SELECT id FROM d`,
    PREPARED,
  )
  return done !== undefined
}
