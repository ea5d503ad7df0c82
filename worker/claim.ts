// What the coordinator answered to a claim, read with the contract's schema rather than trusted by its type:
// a definition or workspace this worker cannot read is never run, and its requirements are never met.
import {
  type CheckResult,
  ClaimFence,
  type ClaimResponse,
  ClaimResponse as ClaimSchema,
  type PreflightReport,
  Reason,
} from '../src/contract/index.js'
import { declaredRequirements } from './checks/declared.js'

// What must read for anything to be written back: the dispatch's fence and its lease.
export type Fenced = ClaimFence

// A claim whose fence reads but whose definition or workspace does not parse with this worker's contract.
export interface Unreadable extends Fenced {
  // the definition's contextRequires as it arrived
  requires: unknown
  // which fields did not parse, for people
  problem: string
}

export type ReadClaim = { ok: true; claim: ClaimResponse } | { ok: false; claim: Unreadable }

// undefined when not even the fence reads: nothing can be written back, so the lease lapses and the
// coordinator hands the dispatch to another attempt (a worker of its own version, say).
export function readClaim(answer: unknown): ReadClaim | undefined {
  const whole = ClaimSchema.safeParse(answer)
  if (whole.success) return { ok: true, claim: whole.data }
  const fence = ClaimFence.safeParse(answer)
  if (!fence.success) return undefined
  const problem = whole.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')
  return { ok: false, claim: { ...fence.data, requires: requiresOf(answer), problem } }
}

// The report for an unreadable claim: every requirement its contextRequires declares (read as far as it
// can be), each error invalid-claim, and the outcome error even when none can be named.
export function refusalReport(claim: Unreadable, at: string): PreflightReport {
  const results: CheckResult[] = declaredIn(claim.requires).map(({ kind, requirement }) => ({
    kind,
    requirement,
    status: 'error',
    reason: Reason.InvalidClaim,
    observed: { problem: claim.problem },
    durationMs: 0,
  }))
  return { outcome: 'error', declared: results.length > 0, results, startedAt: at, finishedAt: at }
}

function declaredIn(requires: unknown) {
  try {
    return declaredRequirements(requires)
  } catch {
    // not an object at all: no requirement can be named
    return []
  }
}

function requiresOf(answer: unknown): unknown {
  return (answer as { subagent?: { contextRequires?: unknown } | null }).subagent?.contextRequires
}
