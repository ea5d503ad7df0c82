// Judges a worker's report against the definition version that was dispatched: the coordinator
// recomputes the outcome from the results and never trusts a claimed one — it only ever lowers it.
import {
  type CheckResult,
  type ContextRequires,
  canonicalJson,
  type Decision,
  type DispatchStatus,
  listRequirements,
  type Outcome,
  outcomeOf,
  type PreflightDecision,
  type PreflightReport,
  Reason,
} from '../../contract/index.js'

export interface Judgement {
  outcome: Outcome
  decision: Decision
  declared: boolean
  reason?: typeof Reason.ReportIncomplete
  // One row per declared requirement in declaration order, then one per extra result.
  results: CheckResult[]
}

const keyOf = (r: { kind: string; requirement: string }) => `${r.kind}\0${r.requirement}`

export function judgeReport(
  requires: ContextRequires | undefined,
  report: Pick<PreflightReport, 'outcome' | 'results'>,
): Judgement {
  const reported = report.results
  const expected = listRequirements(requires)
  const byKey = new Map<string, CheckResult>()
  const extras: CheckResult[] = []
  for (const r of reported) {
    if (byKey.has(keyOf(r))) extras.push(r)
    else byKey.set(keyOf(r), r)
  }
  const results = expected.map((req) => {
    const found = byKey.get(keyOf(req))
    byKey.delete(keyOf(req))
    return found ?? missing(req)
  })
  extras.unshift(...byKey.values())
  const inOrder = reported.every((r, i) => expected[i] !== undefined && keyOf(r) === keyOf(expected[i]))
  const complete = extras.length === 0 && reported.length === expected.length && inOrder
  results.push(...extras.map(extra))
  const recomputed = complete ? outcomeOf(results) : 'unmet'
  // A worker that says it could not check (a claim it could not read) is believed: met is never claimed up.
  const outcome = recomputed === 'met' ? report.outcome : recomputed
  const judgement: Judgement = {
    outcome,
    decision: outcome === 'met' ? 'proceed' : 'abort',
    declared: expected.length > 0,
    results,
  }
  if (!complete) judgement.reason = Reason.ReportIncomplete
  return judgement
}

// The dispatch's status once a decision is stored: the agent may start, or the dispatch ends here.
export function statusAfter(decision: Decision): DispatchStatus {
  return decision === 'proceed' ? 'running' : 'preflight_failed'
}

// Why an aborted report ends the dispatch, each code once: the reasons of its unmet and error results,
// then the report's own (report-incomplete). A report that lets the agent start has neither.
export function endingReasons(judged: Judgement): string[] {
  const codes = judged.results.filter((r) => r.status !== 'met').map((r) => r.reason)
  return [...new Set([...codes, judged.reason])].filter((code) => code !== undefined)
}

// A second report for an attempt that has one: the same report (a retry) gets the first answer, with the
// status that answer set; a different one gets none (a conflict).
export function replay(
  stored: { report: PreflightReport; decision: Decision },
  report: PreflightReport,
): PreflightDecision | undefined {
  if (canonicalJson(stored.report) !== canonicalJson(report)) return undefined
  return { decision: stored.decision, status: statusAfter(stored.decision) }
}

function missing(req: { kind: CheckResult['kind']; requirement: string }): CheckResult {
  return {
    ...req,
    status: 'unmet',
    reason: Reason.ReportIncomplete,
    observed: { missing: true },
    durationMs: 0,
  }
}

// A result nothing declared: kept for the record, counted as unmet.
function extra(r: CheckResult): CheckResult {
  return {
    kind: r.kind,
    requirement: r.requirement,
    status: 'unmet',
    reason: Reason.ReportIncomplete,
    observed: { extra: true, reported: { status: r.status, reason: r.reason, observed: r.observed } },
    durationMs: r.durationMs,
  }
}
