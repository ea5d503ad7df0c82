// Preflight reports: read for a report, stored (its results in it, a row for each one that is not met)
// atomically with the dispatch's status change, and read back as the coordinator judged them.
import { sql } from 'drizzle-orm'
import type {
  CheckResult,
  DispatchStatus,
  Outcome,
  PreflightDecision,
  PreflightRequest,
  PreflightView,
} from '../../contract/index.js'
import { type Orm, one, PREPARED } from './client.js'
import type { dispatches, preflightReports, SqlRow, subagentVersions } from './schema.js'
import { eventText, insertReasons, iso, judgedResults, judgedResultsText } from './sql.js'
import { runOne, statement } from './statement.js'

type Report = SqlRow<typeof preflightReports>

export type ReportRead = Pick<SqlRow<typeof dispatches>, 'status' | 'attempt' | 'lease_token'> &
  Pick<SqlRow<typeof subagentVersions>, 'definition'> & {
    // the lease has not run out
    live: boolean
    // the report stored for the attempt: null when there is none
    previous_decision: Report['decision'] | null
    previous_report: Report['report'] | null
  }

// The dispatch as a report for `attempt` needs it: the fence, the pinned definition, and the report
// already stored for that attempt (if any).
export async function readForReport(db: Orm, id: string, attempt: number) {
  return one<ReportRead>(
    db,
    sql`SELECT d.status, d.attempt, d.lease_token, coalesce(d.lease_expires_at > now(), false) AS live,
               sv.definition, p.decision AS previous_decision, p.report AS previous_report
        FROM dispatches d
        JOIN subagent_versions sv ON sv.name = d.subagent_name AND sv.version = d.subagent_version
        LEFT JOIN preflight_reports p ON p.dispatch_id = d.id AND p.attempt = ${attempt}
        WHERE d.id = ${id}`,
    PREPARED,
  )
}

// What the coordinator decided on a report (dispatch/judge.ts) and the status the dispatch moves to.
export interface Verdict {
  status: DispatchStatus
  outcome: Outcome
  decision: PreflightDecision['decision']
  declared: boolean
  reason?: string | undefined
  // The judged rows; sent only with a reason (below).
  results: CheckResult[]
  // Why the dispatch ends here (dispatch_reasons); none when the agent may start.
  reasons: readonly string[]
}

// A complete report's judged results are the reported ones in the same order: they are read from the
// report just stored, and not sent or kept a second time. Only a report-incomplete verdict (missing and
// extra results added) sends and keeps its own list (`judged`).
const judgedRows = (judged: Verdict) => (judged.reason === undefined ? null : JSON.stringify(judged.results))

// The kinds of the judged results, each once, sorted: what the kind filter matches (`kinds`).
const kindsOf = (results: readonly CheckResult[]) => [...new Set(results.map((r) => r.kind))].sort()

// The summary's rows (requirement_rollups) counted on in the same statement as the results: always
// equal to a recount. In key order, so two reports of one subagent lock its rows in the same order.
// Reads the results from `x` (subagent_name, kind, requirement, status, created_at).
export const rollUp = `
  INSERT INTO requirement_rollups AS o (subagent_name, kind, requirement, checks, met, unmet, error, last_met_at)
  SELECT subagent_name, kind, requirement, count(*), count(*) FILTER (WHERE status = 'met'),
         count(*) FILTER (WHERE status = 'unmet'), count(*) FILTER (WHERE status = 'error'),
         max(created_at) FILTER (WHERE status = 'met')
  FROM x GROUP BY subagent_name, kind, requirement ORDER BY subagent_name, kind, requirement
  ON CONFLICT (subagent_name, kind, requirement) DO UPDATE SET checks = o.checks + excluded.checks,
    met = o.met + excluded.met, unmet = o.unmet + excluded.unmet, error = o.error + excluded.error,
    last_met_at = greatest(o.last_met_at, excluded.last_met_at)`

// Writes report, the rows of the results that are not met, the summary's rows, status, event and
// reasons in ONE statement whose WHERE re-checks the fence: atomic without an explicit transaction.
// Answers the subagent's name, or nothing when the fence did not hold.
const writeReportStatement = statement<
  {
    id: string
    attempt: number
    leaseToken: string
    status: DispatchStatus
    outcome: Outcome
    decision: PreflightDecision['decision']
    declared: boolean
    reason: string | null
    workerId: string | null
    report: string
    judged: string | null
    kinds: string
    reasons: string
  },
  Pick<SqlRow<typeof dispatches>, 'subagent_name'>
>(
  (p) => `WITH d AS (
          UPDATE dispatches SET status = ${p.status}, updated_at = now(),
                 ended_at = CASE WHEN ${p.status}::text = 'preflight_failed' THEN now() END,
                 events = events || ${eventText(
                   `'preflight'`,
                   p.attempt,
                   `jsonb_build_object('outcome', ${p.outcome}::text, 'decision', ${p.decision}::text)`,
                 )}
          WHERE id = ${p.id} AND attempt = ${p.attempt} AND lease_token = ${p.leaseToken}
            AND status = 'claimed' AND lease_expires_at > now()
          RETURNING id, status, subagent_name, subagent_version, lease_owner, created_at, worker_id
        ), r AS (
          INSERT INTO preflight_reports (dispatch_id, attempt, subagent_name, subagent_version, worker_id,
                                         outcome, decision, declared, reason, report, judged, kinds)
          SELECT d.id, ${p.attempt}, d.subagent_name, d.subagent_version,
                 coalesce(${p.workerId}::text, d.lease_owner, 'unknown'), ${p.outcome}, ${p.decision},
                 ${p.declared}, ${p.reason}, ${p.report}::jsonb, ${p.judged}::jsonb, ${p.kinds}::text[]
          FROM d RETURNING id, created_at, worker_id, ${judgedResultsText('preflight_reports')} AS results
        ), x AS (
          SELECT r.id, r.created_at, r.worker_id, d.subagent_name, e.ordinality - 1 AS position, e.value->>'kind' AS kind,
                 e.value->>'requirement' AS requirement, e.value->>'status' AS status, e.value
          FROM r, d, jsonb_array_elements(r.results) WITH ORDINALITY AS e(value, ordinality)
        ), res AS (
          INSERT INTO requirement_results (report_id, position, subagent_name, kind, requirement, status, reason,
                                           observed, duration_ms, created_at, worker_id)
          SELECT id, position, subagent_name, kind, requirement, status, value->>'reason', value->'observed',
                 (value->>'durationMs')::float8, created_at, CASE WHEN value ? 'reason' THEN worker_id END
          FROM x WHERE status <> 'met'
        ), roll AS (${rollUp})
        , why AS (${insertReasons('d', `${p.reasons}::jsonb`)})
        SELECT subagent_name FROM d`,
)

export async function writeReport(db: Orm, id: string, req: PreflightRequest, judged: Verdict) {
  return runOne(db, writeReportStatement, {
    id,
    attempt: req.attempt,
    leaseToken: req.leaseToken,
    status: judged.status,
    outcome: judged.outcome,
    decision: judged.decision,
    declared: judged.declared,
    reason: judged.reason ?? null,
    workerId: req.report.worker?.id ?? null,
    report: JSON.stringify(req.report),
    judged: judgedRows(judged),
    kinds: `{${kindsOf(judged.results).join(',')}}`,
    reasons: JSON.stringify(judged.reasons),
  })
}

type ReportRow = Pick<
  Report,
  'attempt' | 'outcome' | 'decision' | 'declared' | 'reason' | 'report' | 'created_at'
>

// The newest attempt's report as the coordinator judged it.
export async function findLatestPreflight(db: Orm, dispatchId: string): Promise<PreflightView | undefined> {
  const r = await one<ReportRow & { results: CheckResult[] }>(
    db,
    sql`SELECT attempt, outcome, decision, declared, reason, report, ${judgedResults('preflight_reports')} AS results,
               ${iso('created_at')} AS created_at
        FROM preflight_reports WHERE dispatch_id = ${dispatchId} ORDER BY attempt DESC LIMIT 1`,
  )
  if (!r) return undefined
  const view: PreflightView = {
    attempt: r.attempt,
    outcome: r.outcome,
    decision: r.decision,
    declared: r.declared,
    results: r.results,
    startedAt: r.report.startedAt,
    finishedAt: r.report.finishedAt,
    createdAt: r.created_at,
  }
  if (r.reason !== null) view.reason = r.reason
  if (r.report.worker) view.worker = r.report.worker
  return view
}
