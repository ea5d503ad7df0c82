// Check results and reports for the tests of the report's forms (text, JSON, JUnit, the reason phrase).
import { type CheckReport, type CheckResult, outcomeOf } from '../../src/contract/index.js'

export const result = (r: Partial<CheckResult> & Pick<CheckResult, 'status'>): CheckResult => ({
  kind: 'paths',
  requirement: 'README.md',
  observed: {},
  durationMs: 1.5,
  ...r,
})

export function report(results: CheckResult[], workspace = '/work/ws'): CheckReport {
  return {
    outcome: outcomeOf(results),
    declared: results.length > 0,
    workspace,
    results,
    startedAt: '2026-05-01T10:00:00.000Z',
    finishedAt: '2026-05-01T10:00:00.250Z',
  }
}

// met, unmet (paths and exec) and error (a git timeout)
export const MIXED = report([
  result({ status: 'met', observed: { match: 'README.md' } }),
  result({
    status: 'unmet',
    requirement: 'pnpm-lock.yaml',
    reason: 'no-match',
    observed: { entriesScanned: 3 },
  }),
  result({
    status: 'error',
    kind: 'git',
    requirement: 'worktree',
    reason: 'timeout',
    observed: { timeoutMs: 10 },
  }),
  result({
    status: 'unmet',
    kind: 'exec',
    requirement: 'pnpm',
    reason: 'not-found',
    observed: { name: 'pnpm' },
  }),
])
