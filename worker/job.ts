// One claimed dispatch: its fence, its lease, its cancellation and what to release when it ends.
import { hostname } from 'node:os'
import type { ClaimResponse, CompleteRequest } from '../src/contract/index.js'
import type { Api, DispatchFence } from './api.js'
import type { Fenced } from './claim.js'
import { cleanUp } from './cleanup.js'
import type { WorkerConfig } from './config.js'
import { cpuSeconds } from './cpu.js'
import { agentEnvironment } from './env.js'
import { type AgentIdentity, privateDirs, sweep } from './identity.js'
import { keepLease } from './lease.js'
import { stepLog, type WorkerLog } from './log.js'
import type { WorkerMetrics } from './metrics.js'
import { Observation } from './observe/observation.js'
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
  // without an identity: the slot's next dispatch is asked for with the completion (nothing is swept
  // between one dispatch's end and the next claim), one request where there were two
  next?: NextClaim
}

// what a completion asks for: the claim request it stands for, without a wait
export type NextRequest = NonNullable<CompleteRequest['next']>

export interface NextClaim {
  // what the completion asks for; undefined when the slot takes no other (stopping, its last dispatch,
  // a coordinator that refused `next`)
  ask(): NextRequest | undefined
  // the claim the completion was answered with
  handed(claim: unknown): void
  // the coordinator refused the field (a version before it): no slot of the worker asks again
  refused(): void
}

export type Ending = 'succeeded' | 'failed' | 'setup_failed' | 'preflight_failed' | 'cancelled' | 'abandoned'

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
  // --observe: what setup and the agent used, for the completion
  observation?: Observation
  workerInfo: { id: string; node: string; hostname: string; image?: string }
  // released in reverse order when the dispatch ends, told how it ended
  onClose(release: (ending: Ending) => Promise<void> | void): void
  close(ending: Ending): Promise<void>
}

// What a program of the dispatch (setup, the agent) had when it ended or was stopped.
export interface ProgramHad {
  exit?: { exitCode: number; durationMs: number }
  tail?: string
}

// Thrown when the dispatch must stop without completing: the lease is lost, the worker is shutting down
// or the dispatch was cancelled; with what the stopped program had.
export class Abandoned extends Error {
  override name = 'Abandoned'
  constructor(
    message: string,
    readonly had: ProgramHad = {},
  ) {
    super(message)
  }
}

// A step that ends the dispatch before the agent: prepare's and setup's failures, as setup-failed writes them.
export type Failure = { ok: false; reason: string; detail: string; exitCode?: number; tail?: string }

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
  const timer = stepTimer(deps.metrics)
  const enter = (next: string) => {
    timer.enter(next)
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
    ...(deadline === undefined ? {} : { deadline }),
    log,
    enter,
    agentEnv,
    git: bindGit(deps.config.git, { signal: stopping.signal, ...(identity ? { identity } : {}) }),
    name,
    ...(identity ? { identity } : {}),
    // the FIFOs of its traces in the workdir: the worker's own, not a directory the agents share
    ...(deps.config.observe === undefined
      ? {}
      : { observation: new Observation(deps.config.observe, deps.config.workdir) }),
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
      const releasing = releases.reverse().map((release) => () => release(ending))
      try {
        await cleanUp({ log, deps, releases: releasing, ...(identity ? { identity } : {}) })
      } finally {
        timer.took()
      }
    },
  }
}

// The step the dispatch is in, and since when: its time (and CPU, read only for the metrics: a /proc
// read each step) is observed as the next one begins, and at the end.
function stepTimer(metrics: DispatchDeps['metrics']): { enter(next: string): void; took(): void } {
  const cpu = metrics ? cpuSeconds : () => 0
  let step = { name: 'claim', at: performance.now(), cpu: cpu() }
  const took = () => metrics?.stepTook(step.name, (performance.now() - step.at) / 1000, cpu() - step.cpu)
  return {
    enter(next) {
      took()
      step = { name: next, at: performance.now(), cpu: cpu() }
    },
    took,
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

// A step begins: its event is posted (once the dispatch is still active) before it acts.
export async function begin(job: Job<Fenced>, step: string, detail?: Record<string, unknown>): Promise<void> {
  ensureActive(job)
  job.enter(step)
  await job.deps.api.event(job.fence, step, detail, job.signal)
}

// A program's output, line by line, into the dispatch's log; when it ends, the log says how many of its
// lines a slow reader made it drop, with the dispatch's id and step.
export async function withOutput<T>(
  job: Job<Fenced>,
  run: (onLine: (line: string) => void) => Promise<T>,
): Promise<T> {
  const output = job.log.openOutput()
  try {
    return await run(output.line)
  } finally {
    output.end()
  }
}

// Stops the dispatch before its next step when the lease is lost, the dispatch was cancelled or the
// worker gave up waiting.
export function ensureActive(job: Job<Fenced>, had?: ProgramHad): void {
  if (job.signal.aborted)
    throw new Abandoned('the lease was lost, the dispatch cancelled or the worker is stopping', had)
}

// How long until the dispatch's deadline (0 once passed); undefined without one.
export function untilDeadline(job: Job<Fenced>): number | undefined {
  return job.deadline === undefined ? undefined : Math.max(0, job.deadline - Date.now())
}
