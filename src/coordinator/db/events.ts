// The dispatch event log: coordinator steps (created, claimed, …) and the worker's lifecycle steps, kept
// on the dispatch's row (`events`, in the order written; an event's place in it, from 1, is its id).
// Worker events are bounded (EventLimits); a read answers the newest EVENTS_SHOWN and the total.
import { sql } from 'drizzle-orm'
import type { DispatchEvent, Fence } from '../../contract/index.js'
import { type Orm, one, PREPARED, rows } from './client.js'
import type { dispatches, SqlRow } from './schema.js'
import { event, jsonb } from './sql.js'

type Dispatch = SqlRow<typeof dispatches>

// GET /v1/dispatches/{id} shows at most this many events, the newest, with the total beside them.
export const EVENTS_SHOWN = 200

export interface EventLimits {
  // Worker events per attempt: this project's worker posts at most 9, and a retry of a stored one is free.
  perAttempt: number
  // Bytes of the JSON `detail` of all the dispatch's worker events together.
  detailBytes: number
}

// The newest EVENTS_SHOWN of a dispatch's events, oldest first, and how many it has: columns of a
// SELECT from dispatches.
export const newestEvents = sql`(SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]'::jsonb)
         FROM jsonb_array_elements(events) WITH ORDINALITY AS e(value, n)
         WHERE e.n > jsonb_array_length(events) - ${EVENTS_SHOWN}::int) AS events,
        jsonb_array_length(events) AS event_count`

export type AppendRow = Pick<DispatchEvent, 'step' | 'at' | 'attempt'> &
  Pick<Dispatch, 'attempt_events' | 'event_bytes'> & {
    outcome: 'added' | 'stored' | 'full'
  }

// Appends a worker's step in one statement: the fence, the retry check (a stored event of the attempt
// with the same step and detail is answered, not stored again), the limits (on the locked dispatch row)
// and the append. Answers `added` or `stored` with the event, `full` with the counts as the statement
// began, or undefined when the fence does not hold.
export function appendEvent(
  db: Orm,
  dispatchId: string,
  fence: Fence,
  step: string,
  detail: unknown,
  bytes: number,
  limits: EventLimits,
) {
  const held = sql`id = ${dispatchId} AND attempt = ${fence.attempt} AND lease_token = ${fence.leaseToken}
            AND status IN ('claimed', 'running') AND lease_expires_at > now()`
  return one<AppendRow>(
    db,
    sql`WITH d AS (
          SELECT attempt, attempt_events, event_bytes, (
            SELECT e FROM jsonb_array_elements(events) AS e
            WHERE (e ->> 'attempt')::int = attempt AND e ->> 'step' = ${step}::text
              AND e -> 'detail' IS NOT DISTINCT FROM ${jsonb(detail)}
            LIMIT 1) AS stored
          FROM dispatches WHERE ${held}
        ), counted AS (
          UPDATE dispatches SET attempt_events = attempt_events + 1, event_bytes = event_bytes + ${bytes}::bigint,
                 events = events || ${event(step, sql`attempt`, jsonb(detail))}
          WHERE ${held} AND NOT EXISTS (SELECT 1 FROM d WHERE stored IS NOT NULL)
            AND attempt_events < ${limits.perAttempt}::int
            AND event_bytes + ${bytes}::bigint <= ${limits.detailBytes}::bigint
          RETURNING events -> -1 AS added
        )
        SELECT 'added' AS outcome, added ->> 'step' AS step, added ->> 'at' AS at, (added ->> 'attempt')::int AS attempt,
               0 AS attempt_events, 0 AS event_bytes
        FROM counted
        UNION ALL SELECT 'stored', stored ->> 'step', stored ->> 'at', (stored ->> 'attempt')::int, 0, 0
        FROM d WHERE stored IS NOT NULL
        UNION ALL SELECT 'full', ${step}::text, NULL, attempt, attempt_events, event_bytes FROM d
        WHERE stored IS NULL AND NOT EXISTS (SELECT 1 FROM counted)`,
    PREPARED,
  )
}

export interface StreamedEvent extends DispatchEvent {
  id: number
}

// The dispatch's status and its events after the `afterId`th, oldest first, at most `limit`, read from
// one row: a final status read here comes with every event before it (the statement that ends a
// dispatch appends its last event). undefined: no such dispatch.
export async function eventsAfter(db: Orm, dispatchId: string, afterId: number, limit: number) {
  const found = await one<Pick<Dispatch, 'status'> & { events: DispatchEvent[] }>(
    db,
    sql`SELECT status, (SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]'::jsonb)
                        FROM jsonb_array_elements(events) WITH ORDINALITY AS e(value, n)
                        WHERE e.n > ${afterId}::bigint AND e.n <= ${afterId}::bigint + ${limit}::int) AS events
        FROM dispatches WHERE id = ${dispatchId}`,
    PREPARED,
  )
  if (!found) return undefined
  const events: StreamedEvent[] = found.events.map((e, i) => ({
    id: afterId + i + 1,
    step: e.step,
    at: e.at,
    attempt: e.attempt,
    ...(e.detail === undefined ? {} : { detail: e.detail }),
  }))
  return { status: found.status, events }
}

// How many events each of these dispatches has (0 when none, or no such dispatch): what changed since a
// waiter looked.
export async function lastEventIds(db: Orm, ids: string[]): Promise<Map<string, number>> {
  const found = await rows<Pick<Dispatch, 'id'> & { last: number }>(
    db,
    sql`SELECT id, jsonb_array_length(events) AS last
        FROM dispatches WHERE id = ANY(${`{${ids.join(',')}}`}::uuid[])`,
    PREPARED,
  )
  return new Map(found.map((r) => [r.id, Number(r.last)]))
}
