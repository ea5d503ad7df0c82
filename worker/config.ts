// The worker's configuration, parsed once at the edge (src/cli/worker.ts), and every default in one place.
import type { CloneCredentials } from './clone-credentials.js'
import type { Tracer } from './observe/trace.js'
import type { Git } from './run/git-env.js'

export interface WorkerConfig {
  workerId: string
  // found once at start (never on the agent's PATH), with the scratch HOME it runs with
  git: Git
  // where fresh workspaces are made
  workdir: string
  // --workspace-root: a workspace.path is used only inside one of these
  roots: readonly string[]
  // extra variables of the worker's environment for the agent
  passEnv: readonly string[]
  // keep the workspace of a dispatch that did not succeed
  keepFailed: boolean
  // clone local paths and file:// too (tests, demos)
  allowLocalRepos: boolean
  // --repo-allow: the remotes this worker clones; none given, every remote of an allowed transport
  repoAllow: readonly string[]
  // --git-credentials, --ssh-key/--ssh-known-hosts: prepare's clone only, never the checks, baseline or agent
  cloneCredentials?: CloneCredentials
  // dispatches at once
  concurrency: number
  // how long one claim waits on the coordinator for work
  waitMs: number
  // how long running dispatches may take after a stop before their agents are stopped
  graceMs: number
  // the claim loop's backoff after a failed claim: from base, doubling up to max
  claimBackoffMs: { base: number; max: number }
  // claim this many dispatches in all, then stop once they have ended (one per container, say)
  maxDispatches?: number
  // slot i runs setup and the agent as uid = gid = agentUid + i (the worker checked it may)
  agentUid?: number
  // sent on every claim: a dispatch with labels is claimed only by a worker that has them all
  labels?: readonly string[]
  // bound on the setup step
  setupTimeoutMs: number
  // bound on each requirement check
  checkTimeoutMs: number
  // bound on each git command of the clone
  cloneTimeoutMs: number
  // bound on each git command of the baseline: a hung git abandons the dispatch instead of holding its lease
  baselineGitTimeoutMs: number
  // none by default: an agent runs as long as it needs while its lease is renewed
  agentTimeoutMs?: number
  // how long the `fault` event may take: a fault already ends the attempt, so an unreachable
  // coordinator must not hold it for the client's whole retry budget
  faultPostMs: number
  // PREFLIGHT_IMAGE, reported with each preflight report
  image?: string
  // --observe: the tracer setup and the agent run under, or why there is none (their output is read instead)
  observe?: Tracer | string
}

// What a worker cannot start without: who it is, its git and where it works.
type Required = 'workerId' | 'git' | 'workdir'

export const defaultConfig: Omit<WorkerConfig, Required> = {
  roots: [],
  passEnv: [],
  keepFailed: false,
  allowLocalRepos: false,
  repoAllow: [],
  concurrency: 1,
  waitMs: 20_000,
  graceMs: 30_000,
  claimBackoffMs: { base: 500, max: 15_000 },
  setupTimeoutMs: 10 * 60_000,
  checkTimeoutMs: 10_000,
  cloneTimeoutMs: 10 * 60_000,
  baselineGitTimeoutMs: 10 * 60_000,
  faultPostMs: 10_000,
}

// The given settings over the defaults.
export function workerConfig(given: Pick<WorkerConfig, Required> & Partial<WorkerConfig>): WorkerConfig {
  return { ...defaultConfig, ...given }
}
