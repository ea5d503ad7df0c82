// Leases: claim (one statement, FOR UPDATE SKIP LOCKED), heartbeat, the sweep, and the write fence.
import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { type ClaimResponse, type DispatchStatus, ExpiryReason, type Fence } from '../../contract/index.js'
import { type Orm, one, PREPARED, rows } from './client.js'
import type { dispatches, SqlRow, subagentVersions } from './schema.js'
import { event, eventText, iso, isoText, NOTIFY_CHANNEL } from './sql.js'
import { bind, runOne, statement } from './statement.js'

const interval = (ms: number) => sql`make_interval(secs => ${ms / 1000}::double precision)`

type Dispatch = SqlRow<typeof dispatches>

type ClaimedRow = Pick<
  Dispatch,
  | 'id'
  | 'attempt'
  | 'workspace'
  | 'labels'
  | 'subagent_name'
  | 'subagent_version'
  | 'priority'
  | 'metadata'
  | 'deadline'
> &
  Pick<SqlRow<typeof subagentVersions>, 'definition'> & {
    // the lease the claim has just written
    lease_token: NonNullable<Dispatch['lease_token']>
    expires_at: NonNullable<Dispatch['lease_expires_at']>
  }

// How long a queued dispatch waits before it goes ahead of every newer one, whatever their priority.
export const PRIORITY_AGING_MS = 300_000

// The claim in one statement: the next queued dispatch the worker may take, locked (FOR UPDATE SKIP
// LOCKED) by one of two index walks — the oldest dispatch queued longer than `agingMs`
// (dispatches_queued), else, and only when that walk found nothing, the highest priority, oldest first
// (dispatches_queued_priority) — then leased to the worker, its `claimed` event appended. The row is
// updated by its id as a value (`d.id = (SELECT …)`), never joined to the walks: a plan made while
// the table was small (postgres.js keeps one per statement and connection) joined by a hash over a
// scan of every dispatch, and kept doing so as the table grew.
const claimText = statement<
  { workerId: string; labels: string; token: string; leaseS: number; agingS: number },
  ClaimedRow
>((p) => {
  // the worker has its labels, and its deadline (if any) has not passed: the sweep ends those, and
  // until it runs none is handed out
  const fits = `(labels IS NULL OR labels <@ ${p.labels}::jsonb) AND (deadline IS NULL OR deadline > now())`
  return `WITH aged AS (
          SELECT id FROM dispatches
          WHERE status = 'queued' AND created_at < now() - make_interval(secs => ${p.agingS}::double precision)
            AND ${fits}
          ORDER BY created_at, id LIMIT 1
          FOR UPDATE SKIP LOCKED
        ), ranked AS (
          SELECT id FROM dispatches
          WHERE status = 'queued' AND ${fits} AND NOT EXISTS (SELECT 1 FROM aged)
          ORDER BY priority DESC, created_at, id LIMIT 1
          FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE dispatches d SET status = 'claimed', attempt = d.attempt + 1, lease_owner = ${p.workerId},
                 lease_token = ${p.token}, updated_at = now(), attempt_events = 0, worker_id = ${p.workerId},
                 lease_expires_at = now() + make_interval(secs => ${p.leaseS}::double precision),
                 events = d.events || ${eventText(`'claimed'`, 'd.attempt + 1', `jsonb_build_object('workerId', ${p.workerId}::text)`)}
          WHERE d.id = (SELECT id FROM aged UNION ALL SELECT id FROM ranked LIMIT 1)
          RETURNING d.id, d.attempt, d.workspace, d.labels, d.subagent_name, d.subagent_version,
                    d.lease_token, d.lease_expires_at, d.priority, d.metadata, d.deadline
        )
        SELECT c.id, c.attempt, c.workspace, c.labels, c.subagent_name, c.subagent_version, sv.definition,
               c.lease_token, ${isoText('c.lease_expires_at')} AS expires_at, c.priority, c.metadata,
               ${isoText('c.deadline')} AS deadline
        FROM claimed c JOIN subagent_versions sv ON sv.name = c.subagent_name AND sv.version = c.subagent_version`
})

const claimParams = (
  worker: { workerId: string; labels?: string[] | undefined },
  leaseMs: number,
  agingMs: number,
  token: string,
) => ({
  workerId: worker.workerId,
  labels: JSON.stringify(worker.labels ?? []),
  token,
  leaseS: leaseMs / 1000,
  agingS: agingMs / 1000,
})

// The claim's text and values as claimNext() sends them, unexecuted: the benchmark and a test EXPLAIN it.
export function claimStatement(
  worker: { workerId: string; labels?: string[] | undefined },
  leaseMs: number,
  agingMs: number,
  token: string,
) {
  return bind(claimText, claimParams(worker, leaseMs, agingMs, token))
}

// Takes the next queued dispatch whose labels the worker has (see claimText); undefined when there
// is none.
export async function claimNext(
  db: Orm,
  worker: { workerId: string; labels?: string[] | undefined },
  leaseMs: number,
  agingMs = PRIORITY_AGING_MS,
): Promise<ClaimResponse | undefined> {
  const row = await runOne(db, claimText, claimParams(worker, leaseMs, agingMs, leaseToken()))
  if (!row) return undefined
  const dispatch: ClaimResponse['dispatch'] = {
    id: row.id,
    attempt: row.attempt,
    workspace: row.workspace,
    subagent: { name: row.subagent_name, version: row.subagent_version },
  }
  if (row.labels) dispatch.labels = row.labels
  dispatch.priority = row.priority
  if (row.metadata) dispatch.metadata = row.metadata
  if (row.deadline) dispatch.deadline = row.deadline
  return { dispatch, subagent: row.definition, lease: { token: row.lease_token, expiresAt: row.expires_at } }
}

// A lease token: 24 random bytes, base64url. Taken from a pool filled 64 at a time: a call to the
// kernel's random source per claim was 1 % of the coordinator's CPU in the cycle benchmark.
const TOKENS_A_FILL = 64
let pool = Buffer.alloc(0)
let taken = 0
function leaseToken(): string {
  if (taken === pool.length) {
    pool = randomBytes(24 * TOKENS_A_FILL)
    taken = 0
  }
  taken += 24
  return pool.toString('base64url', taken - 24, taken)
}

// Extends a live lease held by (attempt, leaseToken); undefined when the fence does not hold. Workers
// beat every second (a cancel is learned from the answer), so the lease is written only once a third of
// it has run: the other beats read the row by its key and answer the lease as it stands.
export async function extendLease(db: Orm, id: string, fence: Fence, leaseMs: number) {
  const held = sql`id = ${id} AND attempt = ${fence.attempt} AND lease_token = ${fence.leaseToken}
          AND status IN ('claimed', 'running') AND lease_expires_at > now()`
  return one<Pick<Dispatch, 'status'> & { expires_at: NonNullable<Dispatch['lease_expires_at']> }>(
    db,
    sql`WITH renewed AS (
          UPDATE dispatches SET lease_expires_at = now() + ${interval(leaseMs)}, updated_at = now()
          WHERE ${held} AND lease_expires_at < now() + ${interval((leaseMs * 2) / 3)}
          RETURNING status, lease_expires_at
        )
        SELECT status, ${iso('lease_expires_at')} AS expires_at FROM renewed
        UNION ALL
        SELECT status, ${iso('lease_expires_at')} AS expires_at FROM dispatches
        WHERE ${held} AND NOT EXISTS (SELECT 1 FROM renewed)`,
    PREPARED,
  )
}

// Returns lapsed leases to the queue, or marks them expired after max_attempts claims or past the
// dispatch's deadline; ends queued dispatches past their deadline (expired, reason 'deadline'). An
// expired one a worker posted a `fault` for is recorded as ended for that reason too.
// `notify`: a requeued dispatch also wakes waiting claims of other coordinators (NOTIFY, sent at
// commit; PostgreSQL folds the identical notifications of one transaction into one).
export async function sweepLeases(
  db: Orm,
  opts: { notify: boolean } = { notify: false },
): Promise<{ id: string; status: DispatchStatus; reason?: string }[]> {
  const late = sql`(deadline IS NOT NULL AND deadline <= now())`
  const ends = sql`(attempt >= max_attempts OR ${late})`
  const lapsed = await rows<Pick<Dispatch, 'id' | 'status'> & { late: boolean }>(
    db,
    sql`WITH leased AS (
          SELECT id FROM dispatches
          WHERE status IN ('claimed', 'running') AND lease_expires_at <= now()
          FOR UPDATE SKIP LOCKED
        ), overdue AS (
          SELECT id FROM dispatches
          WHERE status = 'queued' AND deadline <= now()
          FOR UPDATE SKIP LOCKED
        ), lapsed AS (
          UPDATE dispatches
          SET status = CASE WHEN ${ends} THEN 'expired' ELSE 'queued' END,
              lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, updated_at = now(),
              ended_at = CASE WHEN ${ends} THEN now() END,
              events = events || ${event(
                sql`CASE WHEN ${ends} THEN 'expired' ELSE 'lease-expired' END`,
                sql`attempt`,
                sql`CASE WHEN ${late} THEN jsonb_build_object('reason', ${ExpiryReason.Deadline}::text) END`,
              )}
          WHERE id IN (SELECT id FROM leased UNION ALL SELECT id FROM overdue)
          RETURNING id, status, attempt, created_at, subagent_name, worker_id, ${late} AS late,
                    events @> '[{"step": "fault"}]' AS faulted
        ), faulted AS (
          INSERT INTO dispatch_reasons (dispatch_id, reason, status, created_at, subagent_name, worker_id)
          SELECT id, ${ExpiryReason.Fault}, status, created_at, subagent_name, worker_id FROM lapsed
          WHERE status = 'expired' AND faulted
          UNION ALL
          SELECT id, ${ExpiryReason.Deadline}, status, created_at, subagent_name, worker_id FROM lapsed WHERE late
          ON CONFLICT DO NOTHING
        )
        SELECT id, status, late${
          opts.notify ? sql`, CASE WHEN status = 'queued' THEN pg_notify(${NOTIFY_CHANNEL}, '') END` : sql``
        } FROM lapsed`,
  )
  return lapsed.map(({ id, status, late }) =>
    late ? { id, status, reason: ExpiryReason.Deadline } : { id, status },
  )
}
