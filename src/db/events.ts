// The dispatch event log: coordinator steps (created, claimed, …) and the worker's lifecycle steps.
import { sql } from 'drizzle-orm'
import type { DispatchEvent, EventRecorded } from '../contract/api.js'
import { type Orm, one, PREPARED, rows } from './client.js'
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
export async function appendWorkerEvent(
  db: Orm,
  dispatchId: string,
  fence: { attempt: number; leaseToken: string },
  step: string,
  detail: unknown,
): Promise<EventRecorded | undefined> {
  return one<EventRecorded>(
    db,
    sql`INSERT INTO dispatch_events (dispatch_id, attempt, step, detail)
        SELECT id, attempt, ${step}, ${jsonb(detail)} FROM dispatches
        WHERE id = ${dispatchId} AND attempt = ${fence.attempt} AND lease_token = ${fence.leaseToken}
          AND status IN ('claimed', 'running') AND lease_expires_at > now()
        RETURNING step, ${iso('at')} AS at, attempt`,
    PREPARED,
  )
}
