// What each code a dispatch can fail with means, and what to look at: the one source of `preflight
// explain`, of the operator page and of the tables of docs/troubleshooting.md
// (test/contract/troubleshooting.test.ts holds the doc and this to each other). Every reason code of the
// contract has its entry, or this fails to compile.
import type { DispatchStatus } from './api.js'
import type { AgentReason, ExpiryReason, Reason, SetupReason } from './reasons.js'

// Where a code is seen: a result that is `unmet` or `error`, a setup_failed completion's reason, the fault
// of an expired dispatch, a failed agent's completion, or a dispatch's status.
export type Seen = 'unmet' | 'error' | 'setup_failed' | 'expired' | 'failed' | 'status'

export interface Entry {
  seen: Seen
  // the requirement kind a result reason comes from (`any`: every kind)
  kind?: string
  means: string
  lookAt: string
}

const results = {
  'no-match': {
    seen: 'unmet',
    kind: 'paths',
    means:
      'No entry inside the workspace matches the pattern. `observed.entriesScanned` says how much was walked; `observed.rejected` lists matches that did not count (`symlink-escapes-workspace`, `dangling-symlink`, `unreachable`).',
    lookAt:
      "Did setup stop generating the folder? Is the file only inside `node_modules/` (walked only when the pattern names it) or `.git/` (never walked)? Is it a symlink to outside the workspace? `unreachable`: a directory on the way is closed to the agent's uid (`namei -l <path>` shows the mode and owner of each).",
  },
  'not-found': {
    seen: 'unmet',
    kind: 'exec',
    means:
      "No executable regular file of that name on the agent's PATH. `observed.searched` lists the directories in order; `observed.rejected` candidates that did not count (`directory`, `not-executable`, `dangling-symlink`, `unreachable`).",
    lookAt:
      "The toolchain image; `agent.env.PATH` in the definition; `--pass-env`. The worker's own PATH is not what counts. `not-executable` or `unreachable` when the agent runs as another uid: the mode bits of the file and of each directory on the way, for that uid.",
  },
  'not-a-worktree': {
    seen: 'unmet',
    kind: 'git',
    means: '`worktree: true` but git says the workspace is not inside a work tree.',
    lookAt:
      'The clone, or a setup script that should run `git init`. `GIT_DIR`/`GIT_WORK_TREE` in the environment never count.',
  },
  'is-a-worktree': {
    seen: 'unmet',
    kind: 'git',
    means: '`worktree: false` but the workspace is inside a work tree.',
    lookAt: 'A parent directory that is a repository.',
  },
  'no-history': {
    seen: 'unmet',
    kind: 'git',
    means: '`history: true` but `HEAD` does not resolve to a commit (empty repository, unborn branch).',
    lookAt: 'The ref cloned; `observed.shallow`.',
  },
  'has-history': {
    seen: 'unmet',
    kind: 'git',
    means: '`history: false` but `HEAD` resolves to a commit.',
    lookAt: '',
  },
  'report-incomplete': {
    seen: 'unmet',
    kind: 'any',
    means:
      'The coordinator received a report whose results do not match the dispatched definition one-for-one (missing or extra results). Stored as `unmet`.',
    lookAt: 'Version skew between worker and coordinator; a worker bug.',
  },
  'not-checked': {
    seen: 'error',
    means: 'No checker filled in this result.',
    lookAt: 'A worker that does not know this requirement (version skew); update the worker.',
  },
  'unknown-kind': {
    seen: 'error',
    means: 'The worker has no checker for this requirement kind.',
    lookAt: 'Version skew: the definition uses a kind this worker predates.',
  },
  'invalid-requirement': {
    seen: 'error',
    means:
      "The requirement breaks the contract's rules (an exec name with a slash, a path pattern absolute, with `..`, `a//b`); `observed.problem` says what.",
    lookAt:
      'The coordinator that dispatched it did not validate the definition (another version?): fix the definition. The worker checks again and never resolves such a name.',
  },
  'invalid-claim': {
    seen: 'error',
    means:
      "The worker could not parse the claim's definition or workspace with its contract (`observed.problem` names the fields); it checked nothing, ran nothing and reported every requirement it could name as this.",
    lookAt:
      'Version skew (a coordinator newer than the worker) or a broken proxy; update the worker. The dispatch is `preflight_failed` whatever the coordinator answers.',
  },
  'check-failed': {
    seen: 'error',
    means: 'The checker threw (an I/O fault, permissions). `observed.message` has the error.',
    lookAt: 'Worker logs, filesystem permissions.',
  },
  timeout: {
    seen: 'error',
    means: 'The check did not finish within the per-check timeout.',
    lookAt:
      "A huge tree or directory under a glob's static prefix; a hung `git`; raise `--timeout-ms` or narrow the pattern.",
  },
  'walk-limit': {
    seen: 'error',
    means: 'A glob walked more entries than the bound (200,000 by default) without a match.',
    lookAt: "Narrow the pattern's static prefix (`src/**/*.ts`, not `**/*.ts`).",
  },
  'git-unavailable': {
    seen: 'error',
    means:
      "`git` could not be run: the worker's (found once at its start) is gone, or `preflight check` found none on its PATH.",
    lookAt: 'The worker image.',
  },
} satisfies Record<Reason, Entry>

const setup = {
  'path-not-allowed': {
    seen: 'setup_failed',
    means:
      '`workspace.path` is not inside any `--workspace-root` of the worker (compared by real path, so a symlink out does not pass).',
    lookAt: "The dispatch, or the worker's `--workspace-root` flags.",
  },
  'repo-not-allowed': {
    seen: 'setup_failed',
    means:
      '`workspace.repo` starts with `-`, names a git remote helper (`ext::`, `fd::`), carries a password or token, matches no `--repo-allow` pattern of the worker, or is a local path / `file://` on a worker started without `--allow-local-repos` (the default).',
    lookAt: "The dispatch, or the worker's `--repo-allow` and `--allow-local-repos` flags.",
  },
  'clone-failed': {
    seen: 'setup_failed',
    means: '`git clone` failed or timed out (`--clone-timeout-ms`).',
    lookAt: 'Credentials (`--git-credentials`, `--ssh-key`), network, the URL; the output tail.',
  },
  'ref-not-found': {
    seen: 'setup_failed',
    means: '`workspace.ref` is neither a branch, a tag nor a commit of the repository.',
    lookAt: "The dispatch's `ref`.",
  },
  'no-workspace': {
    seen: 'setup_failed',
    means: 'Neither `repo` nor `path` gave a workspace.',
    lookAt: 'The dispatch.',
  },
  'setup-exit': {
    seen: 'setup_failed',
    means: '`workspace.setup` (or `preflight-setup.sh`) exited non-zero.',
    lookAt: 'The output tail.',
  },
  'setup-timeout': {
    seen: 'setup_failed',
    means: 'Setup ran past `--setup-timeout-ms` and was stopped (its whole process group).',
    lookAt: 'The setup script.',
  },
  'setup-not-started': {
    seen: 'setup_failed',
    means: 'The setup program could not be started (not found, not executable).',
    lookAt: "`workspace.setup[0]` on the agent's PATH.",
  },
  'setup-cancelled': {
    seen: 'setup_failed',
    means: 'The worker was shutting down while setup ran.',
    lookAt: 'Nothing: the dispatch is retried.',
  },
} satisfies Record<SetupReason, Entry>

const expiry = {
  fault: {
    seen: 'expired',
    means:
      "A worker gave an attempt up and said why (its `fault` event): the baseline's `git` failed, or the coordinator refused one of its writes (a 4xx). No agent ran for that attempt.",
    lookAt:
      "The fault's message and the worker's log at that time; for a refused write, the coordinator's answer in that log (version skew?).",
  },
  deadline: {
    seen: 'expired',
    means:
      "The dispatch's own deadline (`deadline` or `timeoutMs` at creation) passed: still queued, it was never claimed and ended `expired`; in setup, it ended `setup_failed`; with its agent running, the worker stopped the agent at the deadline and it ended `failed`.",
    lookAt:
      "The dispatch's `deadline` beside its events: a queue too long for it (`preflight dispatches list --status queued`), or an agent slower than the time it was given.",
  },
} satisfies Record<ExpiryReason, Entry>

const agent = {
  'undeclared-requirement': {
    seen: 'failed',
    means:
      "The agent (or setup) ran a program that no requirement declares and that was on no directory of its PATH, and then the agent failed. `completion.undeclared` names it and the PATH searched; `completion.observed` has everything the worker saw (`source: trace`: its tracer; `output`: the shells' not-found messages, which the agent printed). Only a worker started with `--observe` says so.",
    lookAt:
      'The toolchain image, or the definition: declare it (`exec: [name]`) so preflight checks it before the agent starts, and the next dispatch fails there, with the PATH it searched, instead of mid-run.',
  },
} satisfies Record<AgentReason, Entry>

const statuses = {
  expired: {
    seen: 'status',
    means: "The dispatch's lease ran out `maxAttempts` times (workers died or lost the coordinator).",
    lookAt: '',
  },
  failed: {
    seen: 'status',
    means:
      "Preflight passed, the agent ran and exited non-zero, or was stopped at the dispatch's deadline (reason `deadline`).",
    lookAt: '',
  },
  cancelled: {
    seen: 'status',
    means:
      "An orchestrator cancelled it (queued, in setup or verify, or with its agent running): `cancel` says who (token id, role), why and when; `completion` holds what the worker had (the agent's exit and the tail of its output, the baseline).",
    lookAt: '',
  },
} satisfies Partial<Record<DispatchStatus, Entry>>

export const TROUBLESHOOTING: Readonly<Record<string, Entry>> = {
  ...results,
  ...setup,
  ...expiry,
  ...agent,
  ...statuses,
}
