// drizzle-orm view of migrations/*.sql (the SQL files are the source of truth for the database): the
// tables the code reads through drizzle, in a query or as the row type of a raw statement (SqlRow).
// test/coordinator/db/schema.test.ts holds each one to the migrated database.
import type { Column, Table } from 'drizzle-orm'
import {
  bigint,
  boolean,
  char,
  doublePrecision,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core'
import {
  type Cancellation,
  CHECK_STATUSES,
  type CheckResult,
  type Completion,
  DECISIONS,
  DISPATCH_STATUSES,
  type DispatchEvent,
  type Metadata,
  type PreflightReport,
  ROLES,
  type SubagentDefinition,
  type Workspace,
} from '../../contract/index.js'

// generic in the name: SqlRow keys a row by it
const ts = <N extends string>(name: N) => timestamp(name, { withTimezone: true, mode: 'date' })

// A row of `table` as a raw `sql` statement answers it (client.ts rows()): keyed by column name, each
// value as declared here but for what both drivers answer otherwise: a timestamp as text (select it
// through iso() for ISO 8601), a bigint as text from postgres.js and as a number from PGlite, an array
// as its text ('{a,b}') from postgres.js and as an array from PGlite.
export type SqlRow<T extends Table> = {
  [K in keyof T['_']['columns'] as T['_']['columns'][K]['_']['name']]: SqlValue<T['_']['columns'][K]>
}
type SqlValue<C extends Column> =
  | (C['_']['data'] extends Date
      ? string
      : C['_']['columnType'] extends 'PgBigInt53'
        ? string | number
        : C['_']['columnType'] extends 'PgArray'
          ? string | C['_']['data']
          : C['_']['data'])
  | (C['_']['notNull'] extends true ? never : null)

export const subagentVersions = pgTable(
  'subagent_versions',
  {
    name: text('name').notNull(),
    version: integer('version').notNull(),
    hash: char('hash', { length: 64 }).notNull(),
    definition: jsonb('definition').$type<SubagentDefinition>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.name, t.version] })],
)

export const dispatches = pgTable('dispatches', {
  id: uuid('id').primaryKey(),
  subagentName: text('subagent_name').notNull(),
  subagentVersion: integer('subagent_version').notNull(),
  workspace: jsonb('workspace').$type<Workspace>().notNull(),
  labels: jsonb('labels').$type<string[]>(),
  status: text('status', { enum: DISPATCH_STATUSES }).notNull().default('queued'),
  attempt: integer('attempt').notNull().default(0),
  maxAttempts: integer('max_attempts').notNull().default(3),
  // unique where set (dispatches_idempotency, a partial index)
  idempotencyKey: text('idempotency_key'),
  leaseOwner: text('lease_owner'),
  leaseToken: text('lease_token'),
  leaseExpiresAt: ts('lease_expires_at'),
  completion: jsonb('completion').$type<Completion>(),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
  attemptEvents: integer('attempt_events').notNull().default(0),
  eventBytes: bigint('event_bytes', { mode: 'number' }).notNull().default(0),
  workerId: text('worker_id'),
  endedAt: ts('ended_at'),
  priority: integer('priority').notNull().default(0),
  metadata: jsonb('metadata').$type<Metadata>(),
  deadline: ts('deadline'),
  cancel: jsonb('cancel').$type<Cancellation>(),
  // the event log, oldest first (db/events.ts)
  events: jsonb('events').$type<DispatchEvent[]>().notNull().default([]),
})

export const dispatchReasons = pgTable(
  'dispatch_reasons',
  {
    dispatchId: uuid('dispatch_id').notNull(),
    reason: text('reason').notNull(),
    status: text('status', { enum: DISPATCH_STATUSES }).notNull(),
    createdAt: ts('created_at').notNull(),
    subagentName: text('subagent_name').notNull(),
    workerId: text('worker_id'),
  },
  (t) => [primaryKey({ columns: [t.dispatchId, t.reason] })],
)

export const preflightReports = pgTable('preflight_reports', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  dispatchId: uuid('dispatch_id').notNull(),
  attempt: integer('attempt').notNull(),
  subagentName: text('subagent_name').notNull(),
  subagentVersion: integer('subagent_version').notNull(),
  workerId: text('worker_id').notNull(),
  outcome: text('outcome', { enum: CHECK_STATUSES }).notNull(),
  decision: text('decision', { enum: DECISIONS }).notNull(),
  declared: boolean('declared').notNull(),
  reason: text('reason'),
  report: jsonb('report').$type<PreflightReport>().notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  // the judged results where they are not the reported ones (a report-incomplete verdict), else null
  judged: jsonb('judged').$type<CheckResult[]>(),
  // the kinds of the judged results (the kind filter; migrations/0016)
  kinds: text('kinds').array().notNull().default([]),
})

// The results that are not met, one row each (the reason filters, the drift, the listing); a met result
// is only in its report (migrations/0016).
export const requirementResults = pgTable(
  'requirement_results',
  {
    reportId: bigint('report_id', { mode: 'number' }).notNull(),
    position: integer('position').notNull(),
    subagentName: text('subagent_name').notNull(),
    kind: text('kind').notNull(),
    requirement: text('requirement').notNull(),
    status: text('status', { enum: CHECK_STATUSES }).notNull(),
    reason: text('reason'),
    observed: jsonb('observed').notNull(),
    durationMs: doublePrecision('duration_ms').notNull(),
    createdAt: ts('created_at').notNull(),
    // the report's worker, on a result with a reason (migrations/0014)
    workerId: text('worker_id'),
  },
  (t) => [primaryKey({ columns: [t.reportId, t.position] })],
)

// One row per subagent × requirement, counted on as each report is stored (migrations/0013).
export const requirementRollups = pgTable(
  'requirement_rollups',
  {
    subagentName: text('subagent_name').notNull(),
    kind: text('kind').notNull(),
    requirement: text('requirement').notNull(),
    checks: bigint('checks', { mode: 'number' }).notNull(),
    met: bigint('met', { mode: 'number' }).notNull(),
    unmet: bigint('unmet', { mode: 'number' }).notNull(),
    error: bigint('error', { mode: 'number' }).notNull(),
    lastMetAt: ts('last_met_at'),
  },
  (t) => [primaryKey({ columns: [t.subagentName, t.kind, t.requirement] })],
)

export const apiTokens = pgTable('api_tokens', {
  tokenHash: char('token_hash', { length: 64 }).primaryKey(),
  id: bigint('id', { mode: 'number' }).notNull().unique().generatedAlwaysAsIdentity(),
  role: text('role', { enum: ROLES }).notNull(),
  label: text('label'),
  bootstrap: boolean('bootstrap').notNull().default(false),
  createdAt: ts('created_at').notNull().defaultNow(),
  expiresAt: ts('expires_at'),
  lastUsedAt: ts('last_used_at'),
  revokedAt: ts('revoked_at'),
})
