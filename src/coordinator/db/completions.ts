// Completions: read the dispatch for one, and write one behind the fence.
import { sql } from 'drizzle-orm'
import type { Completion, DispatchStatus, Fence } from '../../contract/index.js'
import { type Orm, one, PREPARED } from './client.js'
import type { dispatches, SqlRow } from './schema.js'
import { eventText, insertReasons, isoText } from './sql.js'
import { runOne, statement } from './statement.js'

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
const writeCompletionStatement = statement<
  {
    id: string
    attempt: number
    leaseToken: string
    required: DispatchStatus
    status: DispatchStatus
    completion: string
    reasons: string
  },
  { id: string }
>(
  (p) => `WITH d AS (
          UPDATE dispatches SET status = ${p.status}, updated_at = now(), ended_at = coalesce(ended_at, now()),
                 completion = ${p.completion}::jsonb || jsonb_build_object('at', ${isoText('now()')}),
                 events = events || ${eventText(`'completed'`, p.attempt, `jsonb_build_object('status', ${p.status}::text)`)}
          WHERE id = ${p.id} AND attempt = ${p.attempt} AND lease_token = ${p.leaseToken}
            AND status = ${p.required} AND (status = 'cancelled' OR lease_expires_at > now()) AND completion IS NULL
          RETURNING id, status, created_at, subagent_name, worker_id
        ), why AS (${insertReasons('d', `${p.reasons}::jsonb`)})
        SELECT id FROM d`,
)

export async function writeCompletion(
  db: Orm,
  id: string,
  fence: Fence,
  required: DispatchStatus,
  completion: Omit<Completion, 'at'>,
  reasons: readonly string[],
): Promise<boolean> {
  const done = await runOne(db, writeCompletionStatement, {
    id,
    attempt: fence.attempt,
    leaseToken: fence.leaseToken,
    required,
    status: completion.status,
    completion: JSON.stringify(completion),
    reasons: JSON.stringify(reasons),
  })
  return done !== undefined
}
