// Preflight reports: stored with one row per result, atomically with the dispatch's status change.
import { sql } from 'drizzle-orm'
import type { PreflightDecision, PreflightRequest, PreflightView } from '../contract/api.js'
import {
  type CheckResult,
  type ContextRequires,
  canonicalJson,
  type PreflightReport,
} from '../contract/index.js'
import { ApiError, ErrorCode } from '../errors.js'
import { type Judgement, judgeReport } from '../judge.js'
import { type Orm, one, rows } from './client.js'
import { appendEvent } from './events.js'
import { lockFenced } from './leases.js'
import { requirementResults } from './schema.js'
import { iso, jsonb } from './sql.js'

export async function storePreflight(
  db: Orm,
  id: string,
  req: PreflightRequest,
  // Told once per stored report (not for a retried one), e.g. to count outcomes in the metrics.
  onStored?: (subagent: string, judged: Judgement) => void,
): Promise<PreflightDecision> {
  return db.transaction(async (tx) => {
    const d = await lockFenced(tx, id, req)
    const previous = await one<{ decision: PreflightDecision['decision']; report: PreflightReport }>(
      tx,
      sql`SELECT decision, report FROM preflight_reports WHERE dispatch_id = ${id} AND attempt = ${req.attempt}`,
    )
    if (previous) {
      // A retry of the same report gets the same answer; anything else is a conflict.
      if (canonicalJson(previous.report) === canonicalJson(req.report)) {
        return { decision: previous.decision, status: d.status }
      }
      throw new ApiError(
        409,
        ErrorCode.ReportConflict,
        'a different report is already stored for this attempt',
      )
    }
    if (d.status !== 'claimed' || !d.live) {
      throw new ApiError(409, ErrorCode.LeaseLost, 'the lease is no longer live', { status: d.status })
    }
    const requires = (d.definition as { contextRequires?: ContextRequires }).contextRequires
    const judged = judgeReport(requires, req.report.results)
    const status = judged.decision === 'proceed' ? 'running' : 'preflight_failed'
    const report = await one<{ id: number }>(
      tx,
      sql`INSERT INTO preflight_reports (dispatch_id, attempt, subagent_name, subagent_version, worker_id,
                                         outcome, decision, declared, reason, report)
          VALUES (${id}, ${req.attempt}, ${d.subagent_name}, ${d.subagent_version},
                  ${req.report.worker?.id ?? d.lease_owner ?? 'unknown'}, ${judged.outcome}, ${judged.decision},
                  ${judged.declared}, ${judged.reason ?? null}, ${jsonb(req.report)})
          RETURNING id`,
    )
    if (!report) throw new Error('the report insert returned no row')
    await insertResults(tx, Number(report.id), d.subagent_name, judged.results)
    await tx.execute(sql`UPDATE dispatches SET status = ${status}, updated_at = now() WHERE id = ${id}`)
    onStored?.(d.subagent_name, judged)
    await appendEvent(tx, id, req.attempt, 'preflight', {
      outcome: judged.outcome,
      decision: judged.decision,
    })
    return { decision: judged.decision, status }
  })
}

async function insertResults(tx: Orm, reportId: number, subagentName: string, results: CheckResult[]) {
  if (results.length === 0) return
  await tx.insert(requirementResults).values(
    results.map((r, position) => ({
      reportId,
      position,
      subagentName,
      kind: r.kind,
      requirement: r.requirement,
      status: r.status,
      reason: r.reason ?? null,
      observed: r.observed,
      durationMs: r.durationMs,
      createdAt: sql`now()`,
    })),
  )
}

interface ReportRow {
  id: number
  attempt: number
  outcome: PreflightView['outcome']
  decision: PreflightView['decision']
  declared: boolean
  reason: string | null
  report: PreflightReport
  created_at: string
}

// The newest attempt's report as the coordinator judged it (results from the stored rows).
export async function findLatestPreflight(db: Orm, dispatchId: string): Promise<PreflightView | undefined> {
  const r = await one<ReportRow>(
    db,
    sql`SELECT id, attempt, outcome, decision, declared, reason, report, ${iso('created_at')} AS created_at
        FROM preflight_reports WHERE dispatch_id = ${dispatchId} ORDER BY attempt DESC LIMIT 1`,
  )
  if (!r) return undefined
  const results = await rows<CheckResult & { reason: string | null }>(
    db,
    sql`SELECT kind, requirement, status, reason, observed, duration_ms AS "durationMs"
        FROM requirement_results WHERE report_id = ${r.id} ORDER BY position`,
  )
  const view: PreflightView = {
    attempt: r.attempt,
    outcome: r.outcome,
    decision: r.decision,
    declared: r.declared,
    results: results.map(({ reason, ...rest }) => (reason === null ? rest : { ...rest, reason })),
    startedAt: r.report.startedAt,
    finishedAt: r.report.finishedAt,
    createdAt: r.created_at,
  }
  if (r.reason !== null) view.reason = r.reason
  if (r.report.worker) view.worker = r.report.worker
  return view
}
