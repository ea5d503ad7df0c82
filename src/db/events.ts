// The dispatch event log: coordinator steps (created, claimed, …) and the worker's lifecycle steps.
import { sql } from 'drizzle-orm'
import type { DispatchEvent, EventRecorded } from '../contract/api.js'
import { type Orm, one, PREPARED, rows } from './client.js'
import type { Fence } from './leases.js'
import { iso, jsonb } from './sql.js'

export async function listEvents(db: Orm, dispatchId: string): Promise<DispatchEvent[]> {
  const list = await rows<{ step: string; at: string; attempt: number; detail: unknown }>(
    db,
    sql`SELECT step, ${iso('at')} AS at, attempt, detail FROM dispatch_events
        WHERE dispatch_id = ${dispatchId} ORDER BY id`,
  )
  return list.map((e) => (e.detail === null ? { step: e.step, at: e.at, attempt: e.attempt } : e))
}

// Appends a worker's step when (attempt, leaseToken) still hold a live lease; undefined otherwise.
// A retry of a step whose answer was lost (the same attempt, step and detail as a stored event of that
// attempt) gets the stored event back and stores nothing. Two identical requests racing each other
// (a retry sent while the first is still being written) may both be stored.
export async function appendWorkerEvent(
  db: Orm,
  dispatchId: string,
  fence: Fence,
  step: string,
  detail: unknown,
): Promise<EventRecorded | undefined> {
  return one<EventRecorded>(
    db,
    sql`WITH d AS (
          SELECT id, attempt, ${step}::text AS step, ${jsonb(detail)} AS detail FROM dispatches
          WHERE id = ${dispatchId} AND attempt = ${fence.attempt} AND lease_token = ${fence.leaseToken}
            AND status IN ('claimed', 'running') AND lease_expires_at > now()
        ), stored AS (
          SELECT e.step, e.at, e.attempt FROM dispatch_events e JOIN d ON e.dispatch_id = d.id
          WHERE e.attempt = d.attempt AND e.step = d.step AND e.detail IS NOT DISTINCT FROM d.detail
          LIMIT 1
        ), added AS (
          INSERT INTO dispatch_events (dispatch_id, attempt, step, detail)
          SELECT id, attempt, step, detail FROM d WHERE NOT EXISTS (SELECT 1 FROM stored)
          RETURNING step, at, attempt
        )
        SELECT step, ${iso('at')} AS at, attempt FROM added
        UNION ALL SELECT step, ${iso('at')} AS at, attempt FROM stored`,
    PREPARED,
  )
}
