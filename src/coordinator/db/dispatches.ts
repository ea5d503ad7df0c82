// Dispatches: create (idempotent on the key), read as the wire view, cancel.
import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import {
  type CreateDispatchRequest,
  canonicalJson,
  type DispatchCreated,
  type DispatchStatus,
  type DispatchView,
  type Workspace,
} from '../../contract/index.js'
import { ApiError, ErrorCode, notFound } from '../http/errors.js'
import { type Orm, one, PREPARED } from './client.js'
import { listEvents } from './events.js'
import { findLatestPreflight } from './preflight.js'
import { iso, jsonb, NOTIFY_CHANNEL } from './sql.js'

export interface Creation {
  dispatch: DispatchCreated
  created: boolean
}

// `notify`: also NOTIFY waiting claims of other coordinators, in the same statement (sent at commit).
export async function createDispatch(
  db: Orm,
  req: CreateDispatchRequest,
  opts: { maxAttempts: number; notify: boolean },
): Promise<Creation> {
  const inserted = await one<DispatchCreated & { pg_notify?: unknown }>(
    db,
    sql`WITH sv AS (
          SELECT name, version FROM subagent_versions WHERE name = ${req.subagent} ORDER BY version DESC LIMIT 1
        ), ins AS (
          INSERT INTO dispatches (id, subagent_name, subagent_version, workspace, labels, idempotency_key, max_attempts)
          SELECT ${randomUUID()}, sv.name, sv.version, ${jsonb(req.workspace)}, ${jsonb(req.labels)},
                 ${req.idempotencyKey ?? null}, ${opts.maxAttempts} FROM sv
          ON CONFLICT (idempotency_key) DO NOTHING
          RETURNING id, status
        ), ev AS (
          INSERT INTO dispatch_events (dispatch_id, attempt, step) SELECT id, 0, 'created' FROM ins
        )
        SELECT id, status${opts.notify ? sql`, pg_notify(${NOTIFY_CHANNEL}, '')` : sql``} FROM ins`,
    PREPARED,
  )
  if (inserted) return { dispatch: { id: inserted.id, status: inserted.status }, created: true }
  if (req.idempotencyKey !== undefined) {
    const existing = await findByKey(db, req.idempotencyKey)
    if (existing) return { dispatch: sameRequestOrThrow(existing, req), created: false }
  }
  throw new ApiError(422, ErrorCode.UnknownSubagent, `no subagent named "${req.subagent}" is registered`)
}

interface KeyedRow {
  id: string
  status: DispatchStatus
  subagent_name: string
  workspace: Workspace
  labels: string[] | null
}

async function findByKey(db: Orm, key: string) {
  return one<KeyedRow>(
    db,
    sql`SELECT id, status, subagent_name, workspace, labels FROM dispatches WHERE idempotency_key = ${key}`,
  )
}

// A reused key must name the same request: a different one is a client bug, not a retry.
function sameRequestOrThrow(row: KeyedRow, req: CreateDispatchRequest): DispatchCreated {
  const same =
    row.subagent_name === req.subagent &&
    canonicalJson(row.workspace) === canonicalJson(req.workspace) &&
    canonicalJson(row.labels ?? null) === canonicalJson(req.labels ?? null)
  if (!same) {
    throw new ApiError(
      409,
      ErrorCode.IdempotencyConflict,
      'this idempotencyKey was used for a different dispatch',
      {
        id: row.id,
      },
    )
  }
  return { id: row.id, status: row.status }
}

interface DispatchRow {
  id: string
  status: DispatchStatus
  attempt: number
  max_attempts: number
  subagent_name: string
  subagent_version: number
  workspace: Workspace
  labels: string[] | null
  idempotency_key: string | null
  completion: DispatchView['completion'] | null
  created_at: string
  updated_at: string
}

export async function findDispatch(db: Orm, id: string): Promise<DispatchView | undefined> {
  const row = await one<DispatchRow>(
    db,
    sql`SELECT id, status, attempt, max_attempts, subagent_name, subagent_version, workspace, labels,
               idempotency_key, completion, ${iso('created_at')} AS created_at, ${iso('updated_at')} AS updated_at
        FROM dispatches WHERE id = ${id}`,
  )
  if (!row) return undefined
  const [{ events, total }, preflight] = await Promise.all([listEvents(db, id), findLatestPreflight(db, id)])
  const view: DispatchView = {
    id: row.id,
    status: row.status,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    subagent: { name: row.subagent_name, version: row.subagent_version },
    workspace: row.workspace,
    events,
    eventCount: total,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
  if (row.labels) view.labels = row.labels
  if (row.idempotency_key !== null) view.idempotencyKey = row.idempotency_key
  if (preflight) view.preflight = preflight
  if (row.completion) view.completion = row.completion
  return view
}

// queued or claimed → cancelled; cancelling a cancelled dispatch answers the same (a retry).
export async function cancelDispatch(db: Orm, id: string): Promise<DispatchCreated> {
  const cancelled = await one<DispatchCreated>(
    db,
    sql`WITH c AS (
          UPDATE dispatches SET status = 'cancelled', lease_owner = NULL, lease_token = NULL,
                 lease_expires_at = NULL, updated_at = now()
          WHERE id = ${id} AND status IN ('queued', 'claimed')
          RETURNING id, status, attempt
        ), ev AS (
          INSERT INTO dispatch_events (dispatch_id, attempt, step) SELECT id, attempt, 'cancelled' FROM c
        )
        SELECT id, status FROM c`,
  )
  if (cancelled) return cancelled
  const current = await one<DispatchCreated>(db, sql`SELECT id, status FROM dispatches WHERE id = ${id}`)
  if (!current) throw notFound(`dispatch ${id}`)
  if (current.status === 'cancelled') return current
  throw new ApiError(409, ErrorCode.InvalidState, `a ${current.status} dispatch cannot be cancelled`, {
    status: current.status,
  })
}
