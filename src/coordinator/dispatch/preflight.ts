// Storing a worker's preflight report: judged against the definition version the dispatch pinned, written
// atomically with the status change behind the fence, and answered once — a retry gets the same answer.
import type { ContextRequires, PreflightDecision, PreflightRequest } from '../../contract/index.js'
import type { Orm } from '../db/client.js'
import { type ReportRead, readForReport, writeReport } from '../db/preflight.js'
import type { ClaimHint } from './claim-hints.js'
import { DispatchCode, DispatchError, dispatchNotFound, leaseLost } from './errors.js'
import { fencedWrite } from './fence.js'
import { endingReasons, type Judgement, judgeReport, replay, statusAfter } from './judge.js'

export interface StoredReport {
  answer: PreflightDecision
  // Set when this call stored the report (not for a replayed one): what the metrics count.
  stored?: { subagent: string; judged: Judgement }
}

// Reads, judges in JS, then writes in one statement that re-checks the fence: two round trips in all.
// With the claim's hint (claim-hints.ts) the write goes first, and the read runs only when it matched nothing.
export async function storeReport(
  db: Orm,
  id: string,
  req: PreflightRequest,
  hint?: ClaimHint,
): Promise<StoredReport> {
  if (hint) {
    const stored = await judgeAndWrite(db, id, req, hint.contextRequires)
    if (stored) return stored
  }
  return fencedWrite('this report', async () => {
    const d = await readForReport(db, id, req.attempt)
    if (!d) throw dispatchNotFound(id)
    const replayed = replayOrRefuse(d, req)
    if (replayed) return { answer: replayed }
    return judgeAndWrite(db, id, req, d.definition.contextRequires)
  })
}

// A retry of the stored report gets its answer (the status it set, not the current one: a retry may come
// after completion); a different report is a conflict; no report yet needs this lease, live and claimed.
function replayOrRefuse(d: ReportRead, req: PreflightRequest): PreflightDecision | undefined {
  if (d.attempt !== req.attempt || d.lease_token !== req.leaseToken) throw leaseLost(d)
  if (d.previous_report && d.previous_decision) {
    const again = replay({ report: d.previous_report, decision: d.previous_decision }, req.report)
    if (again) return again
    throw new DispatchError(
      DispatchCode.ReportConflict,
      'a different report is already stored for this attempt',
    )
  }
  if (d.status !== 'claimed' || !d.live) throw leaseLost(d)
  return undefined
}

// Undefined when the fence no longer held at the write.
async function judgeAndWrite(
  db: Orm,
  id: string,
  req: PreflightRequest,
  requires: ContextRequires | undefined,
): Promise<StoredReport | undefined> {
  const judged = judgeReport(requires, req.report)
  const status = statusAfter(judged.decision)
  const written = await writeReport(db, id, req, { ...judged, status, reasons: endingReasons(judged) })
  if (!written) return undefined
  return {
    answer: { decision: judged.decision, status },
    stored: { subagent: written.subagent_name, judged },
  }
}
