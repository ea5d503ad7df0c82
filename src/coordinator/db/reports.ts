// Operators' report listing: filters, newest first, keyset pagination on (created_at, id).
import { and, desc, eq, type SQL, sql } from 'drizzle-orm'
import { type CheckResult, type Outcome, type ReportPage, RequirementKind } from '../../contract/index.js'
import type { Orm } from './client.js'
import { decodeCursor, isMicroInstant, pageOf } from './cursor.js'
import { preflightReports as pr, requirementResults as rr } from './schema.js'
import { judgedResults, keysetWindow } from './sql.js'

export interface ReportFilters {
  outcome?: Outcome | undefined
  subagent?: string | undefined
  worker?: string | undefined
  kind?: string | undefined
  reason?: string | undefined
  since?: string | undefined // ISO 8601, inclusive
  until?: string | undefined // ISO 8601, exclusive
}

export interface ReportPageQuery extends ReportFilters {
  limit: number
  cursor?: string | undefined
}

const isKey = (v: unknown): v is [string, number] =>
  Array.isArray(v) && v.length === 2 && isMicroInstant(v[0]) && Number.isSafeInteger(v[1]) && v[1] > 0

// Drivers differ: postgres.js parses jsonb, others may hand over the text.
const parseJson = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T

// The results as the coordinator judged them: the kind / reason filters match the ones a
// report-incomplete verdict added, so the items show them.
const resultsOf = judgedResults('preflight_reports')

const microIso = (column: SQL | typeof pr.createdAt) =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const columns = {
  id: pr.id,
  dispatchId: pr.dispatchId,
  subagent: pr.subagentName,
  subagentVersion: pr.subagentVersion,
  workerId: pr.workerId,
  attempt: pr.attempt,
  outcome: pr.outcome,
  results: resultsOf.mapWith(parseJson<CheckResult[]>),
  createdAt: pr.createdAt,
  key: microIso(pr.createdAt),
}

// The page's query, unexecuted (the benchmark EXPLAINs it); fetches one row more than the limit.
export function reportsQuery(db: Orm, query: ReportPageQuery) {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, isKey)
  // only a result that is not met has a row, and only such a result has a reason
  const byResults = query.reason !== undefined
  const byReports = query.outcome !== undefined || query.subagent !== undefined || query.worker !== undefined
  // a reason and a worker: that worker's results with the reason (requirement_results_worker_reason)
  if ((byResults && !byReports) || (query.reason !== undefined && query.worker !== undefined))
    return byResult(db, query, after)
  const filtered = and(
    ...conditionsFor(query),
    ...keysetWindow(pr.createdAt, pr.id, query, after),
    hasResult(query),
  )
  if (!byResults) {
    return db
      .select(columns)
      .from(pr)
      .where(filtered)
      .orderBy(desc(pr.createdAt), desc(pr.id))
      .limit(query.limit + 1)
  }
  // The page's ids first, from the indexes alone, then its rows: with the rows in the same query the
  // planner would rather look each matching result's report up than merge two index walks.
  const page = db
    .select({ id: pr.id, createdAt: pr.createdAt })
    .from(pr)
    .where(filtered)
    .orderBy(desc(pr.createdAt), desc(pr.id))
    .limit(query.limit + 1)
    .as('page')
  return db
    .select(columns)
    .from(page)
    .innerJoin(pr, eq(pr.id, page.id))
    .orderBy(desc(page.createdAt), desc(page.id))
}

// A reason, with a kind or not (one result with both): the query walks the matching results newest
// first (requirement_results_reason / _kind_reason) and joins each one's report until the page is
// full: a frequent code stops after a page, a rare one reads only its few results. A result row
// carries its report's created_at, so the window and the cursor bound the walk itself. Grouped,
// because one report can hold several matching results and must appear once. The report's own
// filters are checked on each report joined; a worker with a reason is the results' own (a result
// with a reason carries its report's worker).
function byResult(db: Orm, query: ReportPageQuery, after: [string, number] | undefined) {
  const matched = db
    .select({ createdAt: rr.createdAt, reportId: rr.reportId })
    .from(rr)
    .where(
      and(
        query.kind === undefined ? undefined : eq(rr.kind, query.kind),
        query.reason === undefined ? undefined : eq(rr.reason, query.reason),
        query.reason === undefined || query.worker === undefined ? undefined : eq(rr.workerId, query.worker),
        ...keysetWindow(rr.createdAt, rr.reportId, query, after),
      ),
    )
    .groupBy(rr.createdAt, rr.reportId)
    .orderBy(desc(rr.createdAt), desc(rr.reportId))
    .as('matched')
  return db
    .select(columns)
    .from(matched)
    .innerJoin(pr, eq(pr.id, matched.reportId))
    .where(and(...conditionsFor(query)))
    .orderBy(desc(matched.createdAt), desc(matched.reportId))
    .limit(query.limit + 1)
}

export async function listReports(db: Orm, query: ReportPageQuery): Promise<ReportPage> {
  const { items, nextCursor } = pageOf(await reportsQuery(db, query), query.limit, (last) => [
    last.key,
    last.id,
  ])
  return {
    items: items.map(({ id: _id, key: _key, createdAt, ...item }) => ({
      ...item,
      createdAt: createdAt.toISOString(),
    })),
    nextCursor,
  }
}

// The report's own filters. A kind is the report's (`kinds`), written as a literal: a kind alone walks
// that kind's partial index (preflight_reports_kind_*), newest first, whose predicate must match it.
// With a reason, the kind is the matching result's (byResult, hasResult), not checked here again.
function conditionsFor(f: ReportFilters): (SQL | undefined)[] {
  return [
    f.outcome === undefined ? undefined : eq(pr.outcome, f.outcome),
    f.subagent === undefined ? undefined : eq(pr.subagentName, f.subagent),
    f.worker === undefined ? undefined : eq(pr.workerId, f.worker),
    // parsed again: only a kind's name is ever written into the statement
    f.kind === undefined || f.reason !== undefined
      ? undefined
      : sql`${pr.kinds} @> ${sql.raw(`'{${RequirementKind.parse(f.kind)}}'`)}`,
  ]
}

// With a report filter as well: reports with a matching result, walked along the report filter's own
// index. The result's copy of created_at is matched too, so both sides are in the page's order and
// PostgreSQL merges the two index walks, stopping when the page is full, however rare either side is.
function hasResult(f: ReportFilters): SQL | undefined {
  if (f.reason === undefined) return undefined
  const match = and(
    sql`requirement_results.report_id = preflight_reports.id`,
    sql`requirement_results.created_at = preflight_reports.created_at`,
    f.kind === undefined ? undefined : eq(rr.kind, f.kind),
    f.reason === undefined ? undefined : eq(rr.reason, f.reason),
  )
  return sql`exists (select 1 from ${rr} where ${match})`
}
