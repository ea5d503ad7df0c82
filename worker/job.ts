// One claimed dispatch: its fence, its lease, its cancellation and what to release when it ends.
import { hostname } from 'node:os'
import type { Baseline, ClaimResponse } from '../src/contract/index.js'
import type { Api, DispatchFence } from './api.js'
import type { Fenced } from './claim.js'
import type { WorkerConfig } from './config.js'
import { cpuSeconds } from './cpu.js'
import { agentEnvironment } from './env.js'
import { type AgentIdentity, privateDirs, slotIdentities, sweep, swept } from './identity.js'
import { keepLease } from './lease.js'
import { removeLeftovers } from './leftovers.js'
import { stepLog, type WorkerLog } from './log.js'
import type { WorkerMetrics } from './metrics.js'
import { bindGit, type JobGit } from './run/job-git.js'

export interface DispatchDeps {
  api: Api
  log: WorkerLog
  config: WorkerConfig
  // the worker's own environment, filtered into the agent environment
  env: NodeJS.ProcessEnv
  // aborted when the worker stops waiting for running dispatches (shutdown after its grace period)
  signal: AbortSignal
  // the slot's own uid/gid (--agent-uid): setup and the agent run as it, never as the worker
  identity?: AgentIdentity
  // --metrics-port: how long each step took, and the CPU it cost
  metrics?: Pick<WorkerMetrics, 'stepTook'>
  // with an identity: something of the dispatch could not be removed, so the slot must claim no more
  // (its next agent, of the same uid, would find it)
  retire?: (why: string) => void
}

export type Ending = 'succeeded' | 'failed' | 'setup_failed' | 'preflight_failed' | 'cancelled' | 'abandoned'

// What a dispatch has so far, written to it when it is cancelled: the baseline once taken, the exit and
// the output's tail of the program (setup, agent) that was stopped.
export interface Had {
  baseline?: Baseline
  exit?: { exitCode: number; durationMs: number }
  tail?: string
}

// A readable claim's job by default; an unreadable one's (Fenced: only its fence is known) is reported, never run.
export interface Job<C extends Fenced = ClaimResponse> {
  claim: C
  fence: DispatchFence
  deps: DispatchDeps
  // aborted on shutdown, when the lease is lost or the dispatch cancelled: running programs stop, and
  // nothing more is written (but, for a cancel, what it had)
  signal: AbortSignal
  // an orchestrator cancelled the dispatch (a heartbeat or a write answered so)
  readonly cancelled: boolean
  cancel(): void
  had: Had
  // the dispatch's deadline (ms since the epoch), when it has one
  deadline?: number
  // the dispatch's log: dispatchId, attempt and the step it is in on every record
  log: WorkerLog
  // the step the dispatch is in from now on, for its log
  enter(step: string): void
  agentEnv: Record<string, string>
  // the one git of the dispatch: the worker's binary, PATH and HOME, as the slot uid, stopped with the job
  git: JobGit
  // `<workdir>/<name>` is the clone; with an identity, `<name>.home` and `<name>.tmp` are its HOME and TMPDIR
  name: string
  identity?: AgentIdentity
  workerInfo: { id: string; node: string; hostname: string; image?: string }
  // released in reverse order when the dispatch ends, told how it ended
  onClose(release: (ending: Ending) => Promise<void> | void): void
  close(ending: Ending): Promise<void>
}

// Thrown when the dispatch must stop without completing: the lease is lost or the worker is shutting down.
export class Abandoned extends Error {
  override name = 'Abandoned'
}

export function openJob<C extends Fenced>(claim: C, deps: DispatchDeps): Job<C> {
  const fence: DispatchFence = {
    id: claim.dispatch.id,
    attempt: claim.dispatch.attempt,
    leaseToken: claim.lease.token,
  }
  // Aborted when the lease is lost or the worker stops waiting. Forwarded by hand, listener removed at
  // the end, rather than AbortSignal.any: the worker's signal lives as long as the worker, and some
  // Node versions keep every signal any() made from a long-lived one (nodejs/node#55351).
  const stopping = new AbortController()
  const forward = () => stopping.abort(deps.signal.reason)
  if (deps.signal.aborted) forward()
  else deps.signal.addEventListener('abort', forward, { once: true })
  const steps = stepLog(deps.log.child({ dispatchId: fence.id, attempt: fence.attempt }), 'claim')
  const log = steps.log
  // the step the dispatch is in, and since when: its time is observed as the next one begins
  // (its CPU read only for the metrics: a /proc read each step)
  const cpu = deps.metrics ? cpuSeconds : () => 0
  let step = { name: 'claim', at: performance.now(), cpu: cpu() }
  const took = () => deps.metrics?.stepTook(step.name, (performance.now() - step.at) / 1000, cpu() - step.cpu)
  const enter = (next: string) => {
    took()
    step = { name: next, at: performance.now(), cpu: cpu() }
    steps.enter(next)
  }
  let cancelled = false
  const identity = deps.identity
  // A cancel stops the running program's group (SIGTERM, then SIGKILL), and with an identity every
  // process of the slot uid at once: one that left the group would otherwise hold the program's output
  // open, and live until the sweep when the dispatch closes. (close() sweeps again, and checks.)
  const cancel = () => {
    if (cancelled) return
    cancelled = true
    stopping.abort()
    if (identity) sweep(identity).catch(() => {})
  }
  const lease = keepLease(
    deps.api,
    fence,
    claim.lease.expiresAt,
    (byCancel) => (byCancel ? cancel() : stopping.abort()),
    log,
  )
  // The lease is let go first when the dispatch ends: a heartbeat during a long workspace removal
  // would only be answered 409 and logged as a lost lease.
  const letGo = () => {
    lease.stop()
    deps.signal.removeEventListener('abort', forward)
  }
  const releases: ((ending: Ending) => Promise<void> | void)[] = []
  const name = `${fence.id}-${fence.attempt}`
  const agentEnv = agentEnvironment(deps.env, deps.config.passEnv, agentVars(claim))
  // fresh per dispatch and the slot uid's own; what the agent leaves there goes with the dispatch
  if (identity) Object.assign(agentEnv, privateDirs(deps.config.workdir, name))
  const deadline = deadlineOf(claim)
  return {
    claim,
    fence,
    deps,
    signal: stopping.signal,
    get cancelled() {
      return cancelled
    },
    cancel,
    had: {},
    ...(deadline === undefined ? {} : { deadline }),
    log,
    enter,
    agentEnv,
    git: bindGit(deps.config.git, { signal: stopping.signal, ...(identity ? { identity } : {}) }),
    name,
    ...(identity ? { identity } : {}),
    workerInfo: {
      id: deps.config.workerId,
      node: process.version,
      hostname: hostname(),
      ...(deps.config.image ? { image: deps.config.image } : {}),
    },
    onClose: (release) => void releases.push(release),
    async close(ending) {
      letGo()
      enter('cleanup')
      try {
        // Nothing of the dispatch outlives it: no process of the slot uid writes while its files go. When
        // some cannot be stopped, the worker touches none of its files and the slot claims no more. The
        // removals walk without following links all the same: another slot's uid may still be writing
        // in a directory this agent opened to it.
        const kept = (why: string) => {
          log.warn('kept its files', { why })
          deps.retire?.(why)
        }
        if (identity && !(await swept(identity, kept))) return
        const left: string[] = []
        const attempt = async (release: () => Promise<void> | void) => {
          try {
            await release()
          } catch (err) {
            const why = err instanceof Error ? err.message : String(err)
            log.warn('cleanup failed', { why })
            left.push(why)
          }
        }
        if (identity)
          await attempt(() =>
            removeLeftovers(
              identity,
              slotIdentities(deps.config.agentUid ?? identity.uid, deps.config.concurrency),
            ),
          )
        for (const release of releases.reverse()) await attempt(() => release(ending))
        if (identity && left.length > 0)
          deps.retire?.(`the dispatch left what could not be removed: ${left[0]}`)
      } finally {
        took()
      }
    },
  }
}

// The dispatch's deadline: none for a claim that could not be read (it runs nothing anyway).
function deadlineOf(claim: Fenced): number | undefined {
  const at = 'subagent' in claim ? (claim as ClaimResponse).dispatch.deadline : undefined
  return at === undefined ? undefined : Date.parse(at)
}

// The definition's agent.env: none for a claim whose definition could not be read.
function agentVars(claim: Fenced): Record<string, string> {
  return 'subagent' in claim ? ((claim as ClaimResponse).subagent.agent.env ?? {}) : {}
}

// Stops the dispatch before its next step when the lease is lost, the dispatch was cancelled or the
// worker gave up waiting.
export function ensureActive(job: Job<Fenced>): void {
  if (job.signal.aborted)
    throw new Abandoned('the lease was lost, the dispatch cancelled or the worker is stopping')
}

// How long until the dispatch's deadline (0 once passed); undefined without one.
export function untilDeadline(job: Job<Fenced>): number | undefined {
  return job.deadline === undefined ? undefined : Math.max(0, job.deadline - Date.now())
}
