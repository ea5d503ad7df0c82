// Judges a worker's report against the definition version that was dispatched: the coordinator
// recomputes the outcome from the results and never trusts a claimed one.
import {
  type CheckResult,
  type ContextRequires,
  listRequirements,
  type Outcome,
  outcomeOf,
  Reason,
} from './contract/index.js'

export interface Judgement {
  outcome: Outcome
  decision: 'proceed' | 'abort'
  declared: boolean
  reason?: typeof Reason.ReportIncomplete
  // One row per declared requirement in declaration order, then one per extra result.
  results: CheckResult[]
}

const keyOf = (r: { kind: string; requirement: string }) => `${r.kind}\0${r.requirement}`

export function judgeReport(requires: ContextRequires | undefined, reported: CheckResult[]): Judgement {
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
  const outcome = complete ? outcomeOf(results) : 'unmet'
  const judgement: Judgement = {
    outcome,
    decision: outcome === 'met' ? 'proceed' : 'abort',
    declared: expected.length > 0,
    results,
  }
  if (!complete) judgement.reason = Reason.ReportIncomplete
  return judgement
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
