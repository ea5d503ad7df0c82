// The agent step: agent.command with the agent environment, its output streamed to the worker log.
import { ExpiryReason } from '../src/contract/index.js'
import type { AgentIdentity } from './identity.js'
import { Abandoned, begin, ensureActive, type Job, untilDeadline, withOutput } from './job.js'
import type { Observation, Start } from './observe/observation.js'
import { type RunResult, runProcess } from './run/process.js'

export interface AgentOptions {
  workspace: string
  command: readonly string[]
  env: Record<string, string>
  // aborted on shutdown after the grace period, or when the lease is lost
  signal: AbortSignal
  onLine: (line: string) => void
  timeoutMs?: number
  identity?: AgentIdentity
  // --observe: run under the tracer (or read the output), for the completion
  observation?: Observation
}

export function runAgent(opts: AgentOptions): Promise<RunResult> {
  const start: Start = (argv, env, identity) =>
    runProcess(argv, {
      cwd: opts.workspace,
      env,
      signal: opts.signal,
      onLine: opts.onLine,
      ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
      ...(identity ? { identity } : {}),
    })
  return opts.observation
    ? opts.observation.run(opts.workspace, opts.command, opts.env, opts.identity, start)
    : start(opts.command, opts.env, opts.identity)
}

// The step as the dispatch runs it: bounded by the dispatch's deadline and --agent-timeout-ms.
export async function agent(job: Job, dir: string): Promise<AgentRun> {
  const command = job.claim.subagent.agent.command
  // The dispatch's deadline and the worker's --agent-timeout-ms: the earlier stops the agent.
  const left = untilDeadline(job)
  if (left === 0) {
    await begin(job, 'agent-timeout', { reason: ExpiryReason.Deadline, exitCode: DEADLINE_EXIT })
    return { exitCode: DEADLINE_EXIT, durationMs: 0, reason: ExpiryReason.Deadline }
  }
  await begin(job, 'agent', { command })
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
      ...(job.observation ? { observation: job.observation } : {}),
    }),
  )
  // A stopped agent is not a result: leave the lease to expire so another attempt runs it whole (or,
  // cancelled, write what it had).
  const exit = { exitCode: run.exitCode, durationMs: run.durationMs }
  if (run.cancelled)
    throw new Abandoned(`agent stopped (${run.signal ?? 'cancelled'})`, { exit, tail: run.tail })
  if (!run.timedOut) return run
  // Stopped for taking too long: that is the agent's result, and never a success — 128 + the signal
  // that ended it, or 124 (as timeout(1)) for an agent that caught the signal and exited 0.
  const exitCode = run.exitCode === 0 ? DEADLINE_EXIT : run.exitCode
  const reason = byDeadline ? { reason: ExpiryReason.Deadline } : {}
  await begin(job, 'agent-timeout', { timeoutMs: timeoutMs ?? null, exitCode, ...reason })
  return { ...run, exitCode, ...reason }
}

// timeout(1)'s exit code: what an agent stopped (or never started) for its time gets when it exited 0.
const DEADLINE_EXIT = 124

// The agent's result; `tail`, the last of its output, unless it never started.
export type AgentRun = {
  exitCode: number
  durationMs: number
  reason?: typeof ExpiryReason.Deadline
  tail?: string
}
