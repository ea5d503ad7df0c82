// Stable reason codes carried by check results, reports and the troubleshooting docs.
export const Reason = {
  // fail-closed defaults and evaluator faults (status "error")
  NotChecked: 'not-checked',
  Timeout: 'timeout',
  CheckFailed: 'check-failed',
  UnknownKind: 'unknown-kind',
  WalkLimit: 'walk-limit',
  GitUnavailable: 'git-unavailable',
  // decided: does not hold (status "unmet")
  NoMatch: 'no-match',
  NotFound: 'not-found',
  NotAWorktree: 'not-a-worktree',
  IsAWorktree: 'is-a-worktree',
  NoHistory: 'no-history',
  HasHistory: 'has-history',
  // coordinator-side
  ReportIncomplete: 'report-incomplete',
} as const
export type Reason = (typeof Reason)[keyof typeof Reason]

// Why a candidate seen during a check did not count.
export const Rejection = {
  SymlinkEscapesWorkspace: 'symlink-escapes-workspace',
  DanglingSymlink: 'dangling-symlink',
  Directory: 'directory',
  NotExecutable: 'not-executable',
} as const
export type Rejection = (typeof Rejection)[keyof typeof Rejection]
