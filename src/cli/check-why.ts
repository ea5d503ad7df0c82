// The reason phrase of a check result, for the text report and JUnit's messages: `reason: detail` from
// what the check observed, never a reason with nothing after it, never empty.
import type { CheckResult } from '../contract/index.js'

// What a reason says when what was observed adds nothing to it.
const REASON_TEXT: Record<string, string> = {
  'not-checked': 'no checker decided it',
  timeout: 'no verdict in time',
  'check-failed': 'the checker failed',
  'unknown-kind': 'no checker for this kind',
  'invalid-requirement': 'not a valid requirement',
  'invalid-claim': 'the claim could not be read',
  'walk-limit': 'the walk reached its bound',
  'git-unavailable': 'git could not be run',
  'no-match': 'nothing matched',
  'not-found': 'not found',
  'not-a-worktree': 'not inside a git worktree',
  'is-a-worktree': 'inside a git worktree',
  'no-history': 'no commit',
  'has-history': 'has commits',
  'report-incomplete': 'the report had no result for it',
}

// One short phrase from what the check observed: `reason: detail`, and never a reason with nothing after it.
export function why(r: CheckResult): string {
  const o = r.observed as Record<string, unknown>
  const detail =
    (r.status === 'met' ? metDetail(r, o) : r.status === 'unmet' ? unmetDetail(r, o) : errorDetail(o)) ||
    REASON_TEXT[r.reason ?? ''] ||
    compact(o)
  const reason = r.status === 'met' ? undefined : r.reason
  return [reason, detail].filter(Boolean).join(': ') || r.status
}

function metDetail(r: CheckResult, o: Record<string, unknown>): string {
  if (r.kind === 'paths') return typeof o.match === 'string' ? `matched ${o.match}` : 'matched'
  if (r.kind === 'exec') {
    if (typeof o.path !== 'string') return ''
    return typeof o.realpath === 'string' && o.realpath !== o.path ? `${o.path} -> ${o.realpath}` : o.path
  }
  return gitFacts(o)
}

function unmetDetail(r: CheckResult, o: Record<string, unknown>): string {
  const rejected =
    Array.isArray(o.rejected) && o.rejected.length > 0 ? `; rejected ${listRejected(o.rejected)}` : ''
  if (r.kind === 'paths') {
    const scanned = typeof o.entriesScanned === 'number' ? ` (${o.entriesScanned} entries scanned)` : ''
    return `nothing matched${scanned}${rejected}`
  }
  if (r.kind === 'exec') {
    const name = typeof o.name === 'string' ? o.name : r.requirement
    const n = Array.isArray(o.searched) ? o.searched.length : undefined
    const where = n === undefined ? '' : ` in ${n} PATH director${n === 1 ? 'y' : 'ies'}`
    return `${name} not found${where}${rejected}`
  }
  return gitFacts(o)
}

// What a checker that could not decide left: its message, the problem, the bound it hit.
function errorDetail(o: Record<string, unknown>): string {
  if (typeof o.message === 'string' && o.message) return o.message
  if (typeof o.problem === 'string' && o.problem) return o.problem
  if (typeof o.timeoutMs === 'number') return `no verdict within ${o.timeoutMs} ms`
  if (typeof o.entriesScanned === 'number') return `stopped after ${o.entriesScanned} entries scanned`
  if (typeof o.kind === 'string') return `no checker for the kind "${o.kind}"`
  if (typeof o.fact === 'string') return `git has no fact "${o.fact}"`
  return ''
}

function gitFacts(o: Record<string, unknown>): string {
  if (!('toplevel' in o) && !('head' in o)) return ''
  return [
    typeof o.toplevel === 'string' ? `worktree ${o.toplevel}` : 'no worktree',
    typeof o.head === 'string' ? `head ${o.head}` : 'no commit',
    ...(o.shallow === true ? ['shallow'] : []),
  ].join(', ')
}

function listRejected(list: unknown[]): string {
  return list
    .map((x) => `${String((x as { path: unknown }).path)} (${String((x as { why: unknown }).why)})`)
    .join(', ')
}

// The observed object itself, short, when nothing above knows its shape.
function compact(o: Record<string, unknown>): string {
  const json = JSON.stringify(o)
  if (json === '{}') return ''
  return json.length > 200 ? `${json.slice(0, 199)}…` : json
}
