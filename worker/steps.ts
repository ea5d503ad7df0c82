// The lifecycle steps of one dispatch; each posts its event before it acts. The order lives in lifecycle.ts.
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Baseline, PreflightReport } from '../src/contract/index.js'
import { runAgent } from './agent.js'
import { captureBaseline } from './baseline.js'
import { verify as verifyRequirements } from './checks/index.js'
import { type Fenced, refusalReport, type Unreadable } from './claim.js'
import { agentScratch, handOver, makePrivateDirs, sweep } from './identity.js'
import { Abandoned, type Ending, ensureActive, type Job } from './job.js'
import { prepareWorkspace } from './prepare.js'
import { runSetup, type SetupResult, setupCommand } from './setup.js'

type Failure = { ok: false; reason: string; detail: string }

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
  // A clone's directory is ours even when the clone failed half-way; a workspace.path never is.
  if (clone) job.onClose((ending) => removeUnlessKept(job, join(config.workdir, name), ending))
  if (identity) {
    const dirs = await makePrivateDirs(config.workdir, name, identity)
    job.onClose(dirs.remove)
  }
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
  })
  // the clone becomes the agent's; a workspace.path stays whose it is
  if (prepared.ok && clone && identity) await handOver(prepared.dir, identity)
  return prepared
}

async function removeUnlessKept(job: Job, dir: string, ending: Ending): Promise<void> {
  if (job.deps.config.keepFailed && ending !== 'succeeded') {
    job.log.info('kept workspace', { dir, ending })
    return
  }
  await rm(dir, { recursive: true, force: true })
}

export async function setup(job: Job, dir: string): Promise<{ ok: true } | Failure> {
  const command = await setupCommand(dir, job.claim.dispatch.workspace.setup)
  await post(job, 'setup', { command: command ?? null })
  // decided once: what the event says is what runs
  if (!command) return { ok: true }
  const result: SetupResult = await runSetup({
    workspace: dir,
    argv: command,
    env: job.agentEnv,
    signal: job.signal,
    onLine: (line) => job.log.output(line),
    timeoutMs: job.deps.config.setupTimeoutMs,
    ...(job.identity ? { identity: job.identity } : {}),
  })
  // Nothing setup started lives on into verify: a process left running could change the workspace
  // after it was checked. (Without an identity, setup's process group is stopped when setup exits.)
  if (job.identity) await sweep(job.identity)
  if (result.ok) return { ok: true }
  ensureActive(job)
  const detail = `${result.command.join(' ')} exited ${result.exitCode} (${result.reason}); last output:\n${result.tail}`
  return { ok: false, reason: result.reason, detail }
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
  // with an identity, the temporary index lives in the agent's private TMPDIR, owned by it
  const makeScratch = identity ? () => agentScratch(job.agentEnv.TMPDIR ?? '', identity) : undefined
  // as the agent (job.git): the objects it writes are the agent's, and it reaches nothing the agent cannot
  return captureBaseline(dir, job.git.run, {
    timeoutMs: job.deps.config.baselineGitTimeoutMs,
    ...(makeScratch ? { makeScratch } : {}),
  })
}

export async function agent(job: Job, dir: string) {
  const command = job.claim.subagent.agent.command
  await post(job, 'agent', { command })
  const timeoutMs = job.deps.config.agentTimeoutMs
  const run = await runAgent({
    workspace: dir,
    command,
    env: job.agentEnv,
    signal: job.signal,
    onLine: (line) => job.log.output(line),
    ...(timeoutMs ? { timeoutMs } : {}),
    ...(job.identity ? { identity: job.identity } : {}),
  })
  // A stopped agent is not a result: leave the lease to expire so another attempt runs it whole.
  if (run.cancelled) throw new Abandoned(`agent stopped (${run.signal ?? 'cancelled'})`)
  if (!run.timedOut) return run
  // Stopped for taking too long: that is the agent's result, and never a success — 128 + the signal
  // that ended it, or 124 (as timeout(1)) for an agent that caught the signal and exited 0.
  const exitCode = run.exitCode === 0 ? 124 : run.exitCode
  await post(job, 'agent-timeout', { timeoutMs: timeoutMs ?? null, exitCode })
  return { ...run, exitCode }
}

export async function complete(
  job: Job,
  run: { exitCode: number; durationMs: number },
  base: Baseline | undefined,
): Promise<Ending> {
  ensureActive(job)
  job.enter('complete')
  const completion = {
    exitCode: run.exitCode,
    durationMs: run.durationMs,
    ...(base ? { baseline: base } : {}),
  }
  await job.deps.api.complete(job.fence, completion, job.signal)
  return run.exitCode === 0 ? 'succeeded' : 'failed'
}

export async function setupFailed(job: Job, failure: Failure): Promise<Ending> {
  await post(job, 'setup-failed', { reason: failure.reason, detail: failure.detail })
  await job.deps.api.setupFailed(job.fence, { reason: failure.reason, detail: failure.detail }, job.signal)
  return 'setup_failed'
}

// Best effort and bounded (config.faultPostMs): a fault is already the end of this attempt.
export async function fault(job: Job<Fenced>, message: string): Promise<void> {
  const bounded = AbortSignal.any([job.signal, AbortSignal.timeout(job.deps.config.faultPostMs)])
  try {
    await job.deps.api.event(job.fence, 'fault', { message: message.slice(0, 2_000) }, bounded)
  } catch {
    // the worker log has it
  }
}
