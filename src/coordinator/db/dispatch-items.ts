// A listed dispatch as a row and as the wire item: its state, and why it ended — the setup reason and
// the tail of its output, the report's requirements that were not met, the last fault, the exit code.
import { type SQL, sql } from 'drizzle-orm'
import { type DispatchItem, FAULT_TEXT_CHARS, type Metadata } from '../../contract/index.js'
import type { dispatches, SqlRow } from './schema.js'
import { iso, isoMicro } from './sql.js'

// Bounds of one item: the end of a setup's output, the failed requirements named, a fault's message.
export const OUTPUT_TAIL_CHARS = 2048
export const FAILED_SHOWN = 20

// The dispatch's own columns (timestamps as ISO text), and what itemColumns computes from them.
export type ItemRow = Pick<
  SqlRow<typeof dispatches>,
  | 'id'
  | 'status'
  | 'attempt'
  | 'max_attempts'
  | 'subagent_name'
  | 'subagent_version'
  | 'priority'
  | 'metadata'
  | 'worker_id'
  | 'created_at'
  | 'updated_at'
  | 'ended_at'
> & {
  // the page's sort column to the microsecond: the instant of its cursor
  key: string
  exit_code: unknown
  setup_reason: string | null
  output_tail: string | null
  preflight: unknown
  fault: unknown
}

// Results of the report that ended a preflight_failed dispatch (its current attempt's), not met, in
// declaration order: the first FAILED_SHOWN of them and how many there were.
const preflightOf = sql.raw(`CASE WHEN d.status = 'preflight_failed' THEN (
    SELECT jsonb_strip_nulls(jsonb_build_object('outcome', p.outcome, 'reason', p.reason,
      'failed', coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('kind', r.kind,
                   'requirement', r.requirement, 'status', r.status, 'reason', r.reason)) ORDER BY r.position)
                 FROM (SELECT * FROM requirement_results WHERE report_id = p.id AND status <> 'met'
                       ORDER BY position LIMIT ${FAILED_SHOWN}) r), '[]'::jsonb),
      'failedCount', (SELECT count(*) FROM requirement_results WHERE report_id = p.id AND status <> 'met')))
    FROM preflight_reports p WHERE p.dispatch_id = d.id AND p.attempt = d.attempt) END`)

// The newest `fault` event of an expired dispatch, whichever attempt posted it.
const faultOf = sql.raw(`CASE WHEN d.status = 'expired' THEN (
    SELECT jsonb_build_object('message', left(coalesce(e.value -> 'detail' ->> 'message', (e.value -> 'detail')::text, ''),
                                              ${FAULT_TEXT_CHARS}),
                              'attempt', e.value -> 'attempt', 'at', e.value -> 'at')
    FROM jsonb_array_elements(d.events) WITH ORDINALITY AS e(value, n) WHERE e.value ->> 'step' = 'fault'
    ORDER BY e.n DESC LIMIT 1) END`)

// The columns of an item, from `d` (dispatches) and the page's sort column `key` (created_at or ended_at).
export const itemColumns = (
  key: string,
): SQL => sql`d.id, d.status, d.attempt, d.max_attempts, d.subagent_name,
  d.subagent_version, d.priority, d.metadata, d.worker_id, ${isoMicro(key)} AS key, ${iso('d.created_at')} AS created_at,
  ${iso('d.updated_at')} AS updated_at, ${iso('d.ended_at')} AS ended_at, d.completion -> 'exitCode' AS exit_code,
  CASE WHEN d.status = 'setup_failed' THEN d.completion ->> 'reason' END AS setup_reason,
  CASE WHEN d.status = 'setup_failed' THEN right(d.completion ->> 'detail', ${OUTPUT_TAIL_CHARS}::int) END AS output_tail,
  ${preflightOf} AS preflight, ${faultOf} AS fault`

// Drivers differ: postgres.js parses jsonb, others may hand over the text.
const parsed = <T>(value: unknown): T | undefined =>
  value === null || value === undefined
    ? undefined
    : ((typeof value === 'string' ? JSON.parse(value) : value) as T)

export function toItem(row: ItemRow): DispatchItem {
  const item: DispatchItem = {
    id: row.id,
    status: row.status,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    subagent: { name: row.subagent_name, version: row.subagent_version },
    priority: row.priority,
    workerId: row.worker_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    endedAt: row.ended_at,
  }
  const metadata = parsed<Metadata>(row.metadata)
  if (metadata) item.metadata = metadata
  const exitCode = parsed<unknown>(row.exit_code)
  const code = typeof exitCode === 'number' && Number.isSafeInteger(exitCode) ? exitCode : undefined
  if (row.setup_reason !== null) {
    item.setup = { reason: row.setup_reason }
    if (code !== undefined) item.setup.exitCode = code
    if (row.output_tail) item.setup.outputTail = row.output_tail
  } else if (code !== undefined) item.exitCode = code
  const preflight = parsed<NonNullable<DispatchItem['preflight']>>(row.preflight)
  if (preflight) item.preflight = preflight
  const fault = parsed<NonNullable<DispatchItem['fault']>>(row.fault)
  if (fault) item.fault = fault
  return item
}
