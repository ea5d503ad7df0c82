// The lifecycle steps of one dispatch; each posts its event before it acts. The order lives in lifecycle.ts.
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  type Baseline,
  ExpiryReason,
  FAULT_TEXT_CHARS,
  MAX_DETAIL_CHARS,
  type PreflightReport,
  SetupReason,
} from '../src/contract/index.js'
import { runAgent } from './agent.js'
import { captureBaseline } from './baseline.js'
import { verify as verifyRequirements } from './checks/index.js'
import { type Fenced, refusalReport, type Unreadable } from './claim.js'
import { agentDirs, agentScratch, handOver, makePrivateDirs, sweep } from './identity.js'
import { Abandoned, type Ending, ensureActive, type Job, untilDeadline } from './job.js'
import { prepareWorkspace } from './prepare.js'
import { removeAgentTrees } from './run/remove.js'
import { runSetup, type SetupResult, setupCommand } from './setup.js'

type Failure = { ok: false; reason: string; detail: string; exitCode?: number }

async function post(job: Job<Fenced>, step: string, detail?: Record<string, unknown>): Promise<void> {
  ensureActive(job)
  job.enter(step)
  await job.deps.api.event(job.fence, step, detail, job.signal)
}

export async function prepare(job: Job): Promise<{ ok: true; dir: string } | Failure> {
  await post(job, 'prepare')
  const { config } = job.deps
  const { name, identity } = job
  const clone = job.claim.dispatch.workspace.path === undefined
  // A clone's directory is ours even when the clone failed half-way; a workspace.path never is. It goes
  // at the end with the slot uid's own directories, in one removal.
  const workspace = clone ? join(config.workdir, name) : undefined
  const own = identity ? agentDirs(config.workdir, name) : []
  if (workspace || identity) job.onClose((ending) => removeAtEnd(job, workspace, own, ending))
  if (identity) await makePrivateDirs(config.workdir, name, identity)
  const prepared = await prepareWorkspace({
    workspace: job.claim.dispatch.workspace,
    workdir: config.workdir,
    name,
    roots: config.roots,
    git: job.git,
    allowLocalRepos: config.allowLocalRepos,
    repoAllow: config.repoAllow,
    cloneCredentials: config.cloneCredentials,
    signal: job.signal,
    timeoutMs: config.cloneTimeoutMs,
    remove: (dir) => removeAll(job, [dir]),
  })
  // the clone becomes the agent's; a workspace.path stays whose it is
  if (prepared.ok && clone && identity) await handOver(prepared.dir, identity)
  return prepared
}

// The dispatch's clone (unless --keep-failed keeps it) and the slot uid's directories, in one removal.
async function removeAtEnd(job: Job, workspace: string | undefined, own: string[], ending: Ending) {
  const keep = workspace !== undefined && job.deps.config.keepFailed && ending !== 'succeeded'
  if (keep) job.log.info('kept workspace', { dir: workspace, ending })
  await removeAll(job, [...(workspace && !keep ? [workspace] : []), ...own])
}

// With an identity, by a walk that follows no link, as other uids may write in them
// (worker/run/remove.ts); without one the agent is the worker's own uid, and fs.rm serves.
async function removeAll(job: Job, paths: string[]): Promise<void> {
  if (job.identity) await removeAgentTrees(paths, job.identity)
  else for (const dir of paths) await rm(dir, { recursive: true, force: true })
}

export async function setup(job: Job, dir: string): Promise<{ ok: true } | Failure> {
  const command = await setupCommand(dir, job.claim.dispatch.workspace.setup)
  await post(job, 'setup', { command: command ?? null })
  // decided once: what the event says is what runs
  if (!command) return { ok: true }
  // the dispatch's deadline bounds setup too: the earlier of the two stops it
  const left = untilDeadline(job)
  const result: SetupResult = await withOutput(job, (onLine) =>
    runSetup({
      workspace: dir,
      argv: command,
      env: job.agentEnv,
      signal: job.signal,
      onLine,
      timeoutMs: Math.max(1, Math.min(job.deps.config.setupTimeoutMs, left ?? Number.POSITIVE_INFINITY)),
      ...(job.identity ? { identity: job.identity } : {}),
    }),
  )
  // Nothing setup started lives on into verify: a process left running could change the workspace
  // after it was checked. (Without an identity, setup's process group is stopped when setup exits.)
  if (job.identity) await sweep(job.identity)
  if (result.ok) return { ok: true }
  job.had.tail = result.tail
  ensureActive(job)
  const late = result.reason === SetupReason.SetupTimeout && untilDeadline(job) === 0
  const reason = late ? ExpiryReason.Deadline : result.reason
  const detail = `${result.command.join(' ')} exited ${result.exitCode} (${reason}); last output:\n${result.tail}`
  return { ok: false, reason, detail, exitCode: result.exitCode }
}

// A program's output, line by line, into the dispatch's log; when it ends, the log says how many of its
// lines a slow reader made it drop, with the dispatch's id and step.
async function withOutput<T>(job: Job, run: (onLine: (line: string) => void) => Promise<T>): Promise<T> {
  const output = job.log.openOutput()
  try {
    return await run(output.line)
  } finally {
    output.end()
  }
}

// What the dispatch's completion says of its output: how many lines the log dropped, when it dropped any.
function outputDropped(job: Job<Fenced>): { outputDropped?: number } {
  const dropped = job.log.outputDropped()
  return dropped > 0 ? { outputDropped: dropped } : {}
}

export async function verify(job: Job, dir: string): Promise<PreflightReport> {
  await post(job, 'verify')
  const result = await verifyRequirements(job.claim.subagent.contextRequires, {
    workspace: dir,
    env: job.agentEnv,
    git: job.git.run,
    // the verdict is the agent's: what its uid may reach and execute, not what the worker may
    ...(job.identity ? { agent: job.identity } : {}),
    timeoutMs: job.deps.config.checkTimeoutMs,
  })
  return { ...result, worker: job.workerInfo }
}

// A claim this worker could not read: nothing is checked, every declared requirement is error invalid-claim.
export async function refusal(job: Job<Unreadable>): Promise<PreflightReport> {
  await post(job, 'verify', { problem: job.claim.problem })
  return { ...refusalReport(job.claim, new Date().toISOString()), worker: job.workerInfo }
}

// The coordinator stores the report before it answers; its answer, as it arrived, for lifecycle.ts to judge.
export async function report(job: Job<Fenced>, preflight: PreflightReport): Promise<unknown> {
  await post(job, 'report', { outcome: preflight.outcome })
  return job.deps.api.report(job.fence, preflight, job.signal)
}

export async function baseline(job: Job, dir: string): Promise<Baseline | undefined> {
  await post(job, 'baseline')
  const { identity } = job
  // with an identity, the temporary index lives in a directory of the slot uid's that no agent can reach
  const makeScratch = identity ? () => agentScratch(job.deps.config.workdir, job.name, identity) : undefined
  // as the agent (job.git): the objects it writes are the agent's, and it reaches nothing the agent cannot
  const base = await captureBaseline(dir, job.git.run, {
    timeoutMs: job.deps.config.baselineGitTimeoutMs,
    ...(makeScratch ? { makeScratch } : {}),
  })
  if (base) job.had.baseline = base
  return base
}

export async function agent(job: Job, dir: string): Promise<AgentRun> {
  const command = job.claim.subagent.agent.command
  // The dispatch's deadline and the worker's --agent-timeout-ms: the earlier stops the agent.
  const left = untilDeadline(job)
  if (left === 0) {
    await post(job, 'agent-timeout', { reason: ExpiryReason.Deadline, exitCode: DEADLINE_EXIT })
    return { exitCode: DEADLINE_EXIT, durationMs: 0, reason: ExpiryReason.Deadline }
  }
  await post(job, 'agent', { command })
  // a cancel answered while the event was written: the agent does not start
  ensureActive(job)
  const ceiling = job.deps.config.agentTimeoutMs
  const byDeadline = left !== undefined && (ceiling === undefined || left < ceiling)
  const timeoutMs = byDeadline ? left : ceiling
  const run = await withOutput(job, (onLine) =>
    runAgent({
      workspace: dir,
      command,
      env: job.agentEnv,
      signal: job.signal,
      onLine,
      ...(timeoutMs ? { timeoutMs } : {}),
      ...(job.identity ? { identity: job.identity } : {}),
    }),
  )
  job.had.exit = { exitCode: run.exitCode, durationMs: run.durationMs }
  job.had.tail = run.tail
  // A stopped agent is not a result: leave the lease to expire so another attempt runs it whole (or,
  // cancelled, write what it had).
  if (run.cancelled) throw new Abandoned(`agent stopped (${run.signal ?? 'cancelled'})`)
  if (!run.timedOut) return run
  // Stopped for taking too long: that is the agent's result, and never a success — 128 + the signal
  // that ended it, or 124 (as timeout(1)) for an agent that caught the signal and exited 0.
  const exitCode = run.exitCode === 0 ? DEADLINE_EXIT : run.exitCode
  const reason = byDeadline ? { reason: ExpiryReason.Deadline } : {}
  await post(job, 'agent-timeout', { timeoutMs: timeoutMs ?? null, exitCode, ...reason })
  return { ...run, exitCode, ...reason }
}

// timeout(1)'s exit code: what an agent stopped (or never started) for its time gets when it exited 0.
const DEADLINE_EXIT = 124

type AgentRun = { exitCode: number; durationMs: number; reason?: typeof ExpiryReason.Deadline }

export async function complete(job: Job, run: AgentRun, base: Baseline | undefined): Promise<Ending> {
  ensureActive(job)
  job.enter('complete')
  const completion = {
    exitCode: run.exitCode,
    durationMs: run.durationMs,
    ...(base ? { baseline: base } : {}),
    ...(run.reason ? { reason: run.reason } : {}),
    ...outputDropped(job),
  }
  const answer = await job.deps.api.complete(job.fence, completion, job.signal)
  // a cancel that won the race: the dispatch keeps this completion as what it had
  if (answer?.status === 'cancelled') return 'cancelled'
  return run.exitCode === 0 && !run.reason ? 'succeeded' : 'failed'
}

export async function setupFailed(job: Job, failure: Failure): Promise<Ending> {
  await post(job, 'setup-failed', { reason: failure.reason, detail: failure.detail })
  const answer = await job.deps.api.setupFailed(
    job.fence,
    {
      reason: failure.reason,
      detail: failure.detail,
      ...(failure.exitCode === undefined ? {} : { exitCode: failure.exitCode }),
      ...outputDropped(job),
    },
    job.signal,
  )
  return answer?.status === 'cancelled' ? 'cancelled' : 'setup_failed'
}

// Cancelled: what the dispatch had (the stopped program's exit and output tail, the baseline) is written
// to it, best effort and bounded like a fault; the cancel itself is already stored.
export async function cancelled(job: Job<Fenced>): Promise<Ending> {
  job.enter('cancelled')
  const { baseline: base, exit, tail } = job.had
  const had = {
    ...exit,
    ...(base ? { baseline: base } : {}),
    ...(tail ? { detail: tail.slice(-MAX_DETAIL_CHARS) } : {}),
    ...outputDropped(job),
  }
  const bounded = AbortSignal.any([job.deps.signal, AbortSignal.timeout(job.deps.config.faultPostMs)])
  try {
    await job.deps.api.cancelled(job.fence, had, bounded)
  } catch (err) {
    job.log.warn('could not write what the cancelled dispatch had', {
      why: err instanceof Error ? err.message : String(err),
    })
  }
  return 'cancelled'
}

// Best effort and bounded (config.faultPostMs): a fault is already the end of this attempt.
export async function fault(job: Job<Fenced>, message: string): Promise<void> {
  const bounded = AbortSignal.any([job.signal, AbortSignal.timeout(job.deps.config.faultPostMs)])
  try {
    await job.deps.api.event(job.fence, 'fault', { message: message.slice(0, FAULT_TEXT_CHARS) }, bounded)
  } catch {
    // the worker log has it
  }
}
