// The dispatch event log: coordinator steps (created, claimed, …) and the worker's lifecycle steps.
// Worker events are bounded (EventLimits); a read answers the newest EVENTS_SHOWN and the total.
import { sql } from 'drizzle-orm'
import type { DispatchEvent, Fence } from '../../contract/index.js'
import { type Orm, one, PREPARED, rows } from './client.js'
import type { dispatchEvents, dispatches, SqlRow } from './schema.js'
import { iso, jsonb } from './sql.js'

type Event = SqlRow<typeof dispatchEvents>

// GET /v1/dispatches/{id} shows at most this many events, the newest, with the total beside them.
export const EVENTS_SHOWN = 200

export interface EventLimits {
  // Worker events per attempt: this project's worker posts at most 9, and a retry of a stored one is free.
  perAttempt: number
  // Bytes of the JSON `detail` of all the dispatch's worker events together.
  detailBytes: number
}

export async function listEvents(
  db: Orm,
  dispatchId: string,
): Promise<{ events: DispatchEvent[]; total: number }> {
  const list = await rows<Pick<Event, 'id' | 'step' | 'at' | 'attempt' | 'detail'> & { total: number }>(
    db,
    sql`SELECT id, step, ${iso('at')} AS at, attempt, detail,
               (SELECT count(*)::int FROM dispatch_events WHERE dispatch_id = ${dispatchId}) AS total
        FROM (SELECT id, step, at, attempt, detail FROM dispatch_events
              WHERE dispatch_id = ${dispatchId} ORDER BY id DESC LIMIT ${EVENTS_SHOWN}) newest
        ORDER BY id`,
  )
  const events = list.map(({ total: _total, id: _id, ...e }) =>
    e.detail === null ? { step: e.step, at: e.at, attempt: e.attempt } : e,
  )
  return { events, total: list[0]?.total ?? 0 }
}

export type AppendRow = Pick<Event, 'step' | 'at' | 'attempt'> &
  Pick<SqlRow<typeof dispatches>, 'attempt_events' | 'event_bytes'> & {
    outcome: 'added' | 'stored' | 'full'
  }

// Appends a worker's step in one statement: the fence, the retry check (a stored event of the attempt
// with the same step and detail is answered, not stored again), the limits (on the locked dispatch row)
// and the insert. Answers `added` or `stored` with the event, `full` with the counts as the statement
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
          SELECT id, attempt, ${step}::text AS step, ${jsonb(detail)} AS detail, attempt_events, event_bytes
          FROM dispatches WHERE ${held}
        ), stored AS (
          SELECT e.step, e.at, e.attempt FROM dispatch_events e JOIN d ON e.dispatch_id = d.id
          WHERE e.attempt = d.attempt AND e.step = d.step AND e.detail IS NOT DISTINCT FROM d.detail
          LIMIT 1
        ), counted AS (
          UPDATE dispatches SET attempt_events = attempt_events + 1, event_bytes = event_bytes + ${bytes}::bigint
          WHERE ${held} AND NOT EXISTS (SELECT 1 FROM stored)
            AND attempt_events < ${limits.perAttempt}::int
            AND event_bytes + ${bytes}::bigint <= ${limits.detailBytes}::bigint
          RETURNING id, attempt
        ), added AS (
          INSERT INTO dispatch_events (dispatch_id, attempt, step, detail)
          SELECT counted.id, counted.attempt, d.step, d.detail FROM counted, d
          RETURNING step, at, attempt
        )
        SELECT 'added' AS outcome, step, ${iso('at')} AS at, attempt, 0 AS attempt_events, 0 AS event_bytes
        FROM added
        UNION ALL SELECT 'stored', step, ${iso('at')}, attempt, 0, 0 FROM stored
        UNION ALL SELECT 'full', step, NULL, attempt, attempt_events, event_bytes FROM d
        WHERE NOT EXISTS (SELECT 1 FROM stored) AND NOT EXISTS (SELECT 1 FROM counted)`,
    PREPARED,
  )
}

export interface StreamedEvent extends DispatchEvent {
  id: number
}

// The dispatch's status and its events after `afterId`, oldest first, at most `limit`, read together:
// a final status read here comes with every event before it (the statement that ends a dispatch writes
// its last event). Events of one dispatch are written under its row's lock, so their ids grow in the
// order they commit: a reader that saw id n never later finds one below it. undefined: no such dispatch.
export async function eventsAfter(db: Orm, dispatchId: string, afterId: number, limit: number) {
  // the event's columns are null when none is left (LEFT JOIN): told by its id
  const list = await rows<
    Pick<SqlRow<typeof dispatches>, 'status'> &
      Pick<Event, 'step' | 'at' | 'attempt' | 'detail'> & { id: Event['id'] | null }
  >(
    db,
    sql`SELECT d.status, e.id, e.step, ${iso('e.at')} AS at, e.attempt, e.detail
        FROM dispatches d LEFT JOIN LATERAL (
          SELECT id, step, at, attempt, detail FROM dispatch_events
          WHERE dispatch_id = d.id AND id > ${afterId}::bigint ORDER BY id LIMIT ${limit}::int
        ) e ON true
        WHERE d.id = ${dispatchId}`,
    PREPARED,
  )
  const first = list[0]
  if (!first) return undefined
  const events: StreamedEvent[] = list
    .filter((e) => e.id !== null)
    .map((e) => ({
      id: Number(e.id),
      step: e.step,
      at: e.at,
      attempt: e.attempt,
      ...(e.detail === null ? {} : { detail: e.detail }),
    }))
  return { status: first.status, events }
}

// The id of the newest event of each of these dispatches (0 when none): what changed since a waiter looked.
export async function lastEventIds(db: Orm, ids: string[]): Promise<Map<string, number>> {
  const found = await rows<Pick<SqlRow<typeof dispatches>, 'id'> & { last: Event['id'] | null }>(
    db,
    sql`SELECT d.id, (SELECT max(e.id) FROM dispatch_events e WHERE e.dispatch_id = d.id) AS last
        FROM dispatches d WHERE d.id = ANY(${`{${ids.join(',')}}`}::uuid[])`,
    PREPARED,
  )
  return new Map(found.map((r) => [r.id, Number(r.last ?? 0)]))
}
