// Stable reason codes carried by check results, reports and the troubleshooting docs.
export const Reason = {
  // fail-closed defaults and evaluator faults (status "error")
  NotChecked: 'not-checked',
  Timeout: 'timeout',
  CheckFailed: 'check-failed',
  UnknownKind: 'unknown-kind',
  InvalidRequirement: 'invalid-requirement',
  // the worker could not read the claim's definition or workspace with its contract: nothing was checked
  InvalidClaim: 'invalid-claim',
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

// Why a dispatch ended as setup_failed (completion.reason): the workspace could not be prepared or set up.
export const SetupReason = {
  PathNotAllowed: 'path-not-allowed',
  RepoNotAllowed: 'repo-not-allowed',
  CloneFailed: 'clone-failed',
  RefNotFound: 'ref-not-found',
  NoWorkspace: 'no-workspace',
  SetupExit: 'setup-exit',
  SetupTimeout: 'setup-timeout',
  SetupNotStarted: 'setup-not-started',
  SetupCancelled: 'setup-cancelled',
} as const
export type SetupReason = (typeof SetupReason)[keyof typeof SetupReason]

// Why an expired dispatch ran out of attempts, when a worker said: it posted a `fault` event (the
// attempt could not go on: the baseline's git failed, the coordinator refused a write). The listing's
// `reason` filter takes it beside the setup and result reasons.
// `deadline`: the dispatch's own deadline passed — queued (expired, never claimed), in setup (setup_failed)
// or with its agent running (failed, the agent stopped at it).
export const ExpiryReason = {
  Fault: 'fault',
  Deadline: 'deadline',
} as const
export type ExpiryReason = (typeof ExpiryReason)[keyof typeof ExpiryReason]

// Why a failed agent's dispatch failed, when its worker saw it (--observe; docs/attribution.md): the agent
// or setup used a program that no requirement declares and that was not there.
export const AgentReason = {
  UndeclaredRequirement: 'undeclared-requirement',
} as const
export type AgentReason = (typeof AgentReason)[keyof typeof AgentReason]

// Why a candidate seen during a check did not count.
export const Rejection = {
  SymlinkEscapesWorkspace: 'symlink-escapes-workspace',
  DanglingSymlink: 'dangling-symlink',
  Directory: 'directory',
  NotExecutable: 'not-executable',
  // exists, but the agent's uid cannot reach or execute it through the directories on the way
  Unreachable: 'unreachable',
} as const
export type Rejection = (typeof Rejection)[keyof typeof Rejection]

// Every reason code a dispatch can end for, or a result carry: what `explain`, the troubleshooting
// entries and the metrics' labels know.
export const REASON_CODES: readonly string[] = [
  ...Object.values(Reason),
  ...Object.values(SetupReason),
  ...Object.values(ExpiryReason),
  ...Object.values(AgentReason),
]
