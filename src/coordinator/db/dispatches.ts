// Dispatches: insert, insert a retry of one, find by idempotency key or id, read as the wire view, cancel,
// read the state.
import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import {
  type Cancellation,
  type CreateDispatchRequest,
  type DispatchCreated,
  type DispatchEvent,
  type DispatchView,
  FINAL_STATUSES,
} from '../../contract/index.js'
import { type Orm, one, PREPARED } from './client.js'
import { newestEvents } from './events.js'
import { findLatestPreflight } from './preflight.js'
import type { dispatches, SqlRow } from './schema.js'
import { event, eventText, iso, jsonb, jsonText, NOTIFY_CHANNEL } from './sql.js'
import { runOne, statement } from './statement.js'

type Dispatch = SqlRow<typeof dispatches>

// Queues a dispatch of the subagent's latest version; nothing when no such subagent is registered or
// the idempotency key is taken (ON CONFLICT DO NOTHING). The deadline is the one given, else now() +
// timeoutS, else none. With `notify`, it also NOTIFYs waiting claims of other coordinators, in the same
// statement (sent at commit).
const insertText = (notify: boolean) =>
  statement<
    {
      id: string
      subagent: string
      workspace: string
      labels: string | null
      idempotencyKey: string | null
      maxAttempts: number
      priority: number
      metadata: string | null
      deadline: string | null
      timeoutS: number | null
    },
    Pick<Dispatch, 'id' | 'status'>
  >(
    (p) => `WITH sv AS (
          SELECT name, version FROM subagent_versions WHERE name = ${p.subagent} ORDER BY version DESC LIMIT 1
        ), ins AS (
          INSERT INTO dispatches (id, subagent_name, subagent_version, workspace, labels, idempotency_key, max_attempts,
                                  priority, metadata, deadline, events)
          SELECT ${p.id}, sv.name, sv.version, ${p.workspace}::jsonb, ${p.labels}::jsonb, ${p.idempotencyKey},
                 ${p.maxAttempts}, ${p.priority}::int, ${p.metadata}::jsonb,
                 coalesce(${p.deadline}::text::timestamptz,
                          now() + make_interval(secs => ${p.timeoutS}::double precision)),
                 ${eventText(`'created'`, '0')}
          FROM sv
          ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING id, status
        )
        SELECT id, status${notify ? `, pg_notify('${NOTIFY_CHANNEL}', '')` : ''} FROM ins`,
  )
const inserts = { quiet: insertText(false), notifying: insertText(true) }

export async function insertDispatch(
  db: Orm,
  req: CreateDispatchRequest,
  opts: { maxAttempts: number; notify: boolean },
): Promise<DispatchCreated | undefined> {
  const inserted = await runOne(db, opts.notify ? inserts.notifying : inserts.quiet, {
    id: randomUUID(),
    subagent: req.subagent,
    workspace: JSON.stringify(req.workspace),
    labels: jsonText(req.labels),
    idempotencyKey: req.idempotencyKey ?? null,
    maxAttempts: opts.maxAttempts,
    priority: req.priority ?? 0,
    metadata: jsonText(req.metadata),
    deadline: req.deadline ?? null,
    timeoutS: req.timeoutMs === undefined ? null : req.timeoutMs / 1000,
  })
  return inserted && { id: inserted.id, status: inserted.status }
}

// Queues a new dispatch of an ended one's subagent version, workspace, labels, priority and metadata,
// with a deadline as far from now as the ended one's was from its creation; its `created` event names
// the ended one (`retryOf`). Undefined when there is no such dispatch, it has not ended, or the
// idempotency key is taken.
export async function insertRetry(
  db: Orm,
  sourceId: string,
  opts: { idempotencyKey?: string | undefined; maxAttempts: number; notify: boolean },
): Promise<DispatchCreated | undefined> {
  const ended = sql.join(
    [...FINAL_STATUSES].map((s) => sql`${s}`),
    sql`, `,
  )
  const inserted = await one<Pick<Dispatch, 'id' | 'status'>>(
    db,
    sql`WITH src AS (
          SELECT id, subagent_name, subagent_version, workspace, labels, priority, metadata, deadline - created_at AS span
          FROM dispatches WHERE id = ${sourceId} AND status IN (${ended})
        ), ins AS (
          INSERT INTO dispatches (id, subagent_name, subagent_version, workspace, labels, idempotency_key, max_attempts,
                                  priority, metadata, deadline, events)
          SELECT ${randomUUID()}, subagent_name, subagent_version, workspace, labels, ${opts.idempotencyKey ?? null},
                 ${opts.maxAttempts}, priority, metadata, now() + span,
                 ${event('created', 0, sql`jsonb_build_object('retryOf', id)`)}
          FROM src
          ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING id, status
        )
        SELECT id, status${opts.notify ? sql`, pg_notify(${NOTIFY_CHANNEL}, '')` : sql``} FROM ins`,
  )
  return inserted && { id: inserted.id, status: inserted.status }
}

export type KeyedRow = Pick<
  Dispatch,
  'id' | 'status' | 'subagent_name' | 'subagent_version' | 'workspace' | 'labels' | 'priority' | 'metadata'
>
const keyedColumns = sql`id, status, subagent_name, subagent_version, workspace, labels, priority, metadata`

// The dispatch created with this idempotency key, as the request that created it.
export async function findByKey(db: Orm, key: string) {
  return one<KeyedRow>(db, sql`SELECT ${keyedColumns} FROM dispatches WHERE idempotency_key = ${key}`)
}

// A dispatch as the request that created it, with its status.
export async function findRequest(db: Orm, id: string) {
  return one<KeyedRow>(db, sql`SELECT ${keyedColumns} FROM dispatches WHERE id = ${id}`)
}

type DispatchRow = Pick<
  Dispatch,
  | 'id'
  | 'status'
  | 'attempt'
  | 'max_attempts'
  | 'subagent_name'
  | 'subagent_version'
  | 'workspace'
  | 'labels'
  | 'idempotency_key'
  | 'priority'
  | 'metadata'
  | 'completion'
  | 'deadline'
  | 'cancel'
  | 'created_at'
  | 'updated_at'
> & { events: DispatchEvent[]; event_count: number }

// The dispatch as GET /v1/dispatches/{id} shows it: its row, with its events, read in one statement (a
// final status comes with every event before it), then its newest attempt's report.
export async function findDispatch(db: Orm, id: string): Promise<DispatchView | undefined> {
  const row = await one<DispatchRow>(
    db,
    sql`SELECT id, status, attempt, max_attempts, subagent_name, subagent_version, workspace, labels,
               idempotency_key, priority, metadata, completion, ${iso('deadline')} AS deadline, cancel,
               ${iso('created_at')} AS created_at, ${iso('updated_at')} AS updated_at, ${newestEvents}
        FROM dispatches WHERE id = ${id}`,
  )
  if (!row) return undefined
  const preflight = await findLatestPreflight(db, id)
  const view: DispatchView = {
    id: row.id,
    status: row.status,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    subagent: { name: row.subagent_name, version: row.subagent_version },
    workspace: row.workspace,
    priority: row.priority,
    events: row.events,
    eventCount: row.event_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
  if (row.labels) view.labels = row.labels
  if (row.idempotency_key !== null) view.idempotencyKey = row.idempotency_key
  if (row.metadata) view.metadata = row.metadata
  if (preflight) view.preflight = preflight
  if (row.completion) view.completion = row.completion
  if (row.deadline) view.deadline = row.deadline
  if (row.cancel) view.cancel = row.cancel
  return view
}

// queued, claimed or running → cancelled, with who and why; undefined when the dispatch has ended (or
// does not exist). A claimed or running one keeps its attempt and lease token: the worker holding it
// learns of the cancel from its next fenced write, and may still write what it had (its completion).
// The WHERE is what makes a cancel and a completion racing each other have one winner: each statement
// needs the state the other one leaves.
export async function cancelDispatch(
  db: Orm,
  id: string,
  cancel: Omit<Cancellation, 'at'>,
): Promise<DispatchCreated | undefined> {
  const recorded = sql`${jsonb(cancel)} || jsonb_build_object('at', ${iso('now()')})`
  return one<Pick<Dispatch, 'id' | 'status'>>(
    db,
    sql`UPDATE dispatches SET status = 'cancelled', updated_at = now(), ended_at = now(), cancel = ${recorded},
               events = events || ${event('cancelled', sql`attempt`, recorded)}
        WHERE id = ${id} AND status IN ('queued', 'claimed', 'running')
        RETURNING id, status`,
  )
}

// Where a dispatch stands: what a write that matched nothing reads to say why.
export async function findDispatchState(db: Orm, id: string) {
  return one<Pick<Dispatch, 'id' | 'status' | 'attempt'>>(
    db,
    sql`SELECT id, status, attempt FROM dispatches WHERE id = ${id}`,
    PREPARED,
  )
}
