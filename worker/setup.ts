// The setup step: workspace.setup (argv), else `sh preflight-setup.sh` when the workspace has one.
import { lstat } from 'node:fs/promises'
import { join } from 'node:path'
import { ExpiryReason, SetupReason } from '../src/contract/index.js'
import { defaultConfig } from './config.js'
import { type AgentIdentity, sweep } from './identity.js'
import { begin, ensureActive, type Failure, type Job, untilDeadline, withOutput } from './job.js'
import type { Observation, Start } from './observe/observation.js'
import { runProcess } from './run/process.js'

const SETUP_SCRIPT = 'preflight-setup.sh'

export interface SetupOptions {
  workspace: string
  // what setupCommand() decided: the event that names it is posted first, so nothing else may run
  argv: readonly string[]
  env: Record<string, string>
  timeoutMs?: number
  signal?: AbortSignal
  onLine?: (line: string) => void
  identity?: AgentIdentity
  // --observe: run under the tracer (or read the output), for the completion
  observation?: Observation
}

export type SetupResult =
  | { ok: true; command: string[]; exitCode: 0; durationMs: number }
  | {
      ok: false
      command: string[]
      reason: SetupReason
      exitCode: number
      tail: string
      durationMs: number
    }

export async function runSetup(opts: SetupOptions): Promise<SetupResult> {
  const command = [...opts.argv]
  const timeoutMs = opts.timeoutMs ?? defaultConfig.setupTimeoutMs
  const start: Start = (argv, env, identity) =>
    runProcess(argv, {
      cwd: opts.workspace,
      env,
      timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onLine ? { onLine: opts.onLine } : {}),
      ...(identity ? { identity } : {}),
    })
  const run = opts.observation
    ? await opts.observation.run(opts.workspace, command, opts.env, opts.identity, start, 'setup')
    : await start(command, opts.env, opts.identity)
  if (run.exitCode === 0 && !run.timedOut && !run.cancelled) {
    return { ok: true, command, exitCode: 0, durationMs: run.durationMs }
  }
  return {
    ok: false,
    command,
    reason: failureReason(run),
    exitCode: run.exitCode,
    tail: run.tail,
    durationMs: run.durationMs,
  }
}

// What setup will run: the dispatch's argv, else `sh preflight-setup.sh` when the workspace holds an
// entry of that name — whatever it is: a link (dangling or not) or a directory is run too and fails
// as setup_failed with sh's message, rather than setup being skipped in silence.
export async function setupCommand(workspace: string, argv: readonly string[] | undefined) {
  if (argv && argv.length > 0) return [...argv]
  const script = await lstat(join(workspace, SETUP_SCRIPT)).catch(() => undefined)
  return script ? ['sh', SETUP_SCRIPT] : undefined
}

function failureReason(run: { timedOut: boolean; cancelled: boolean; failedToStart: boolean }) {
  if (run.timedOut) return SetupReason.SetupTimeout
  if (run.cancelled) return SetupReason.SetupCancelled
  if (run.failedToStart) return SetupReason.SetupNotStarted
  return SetupReason.SetupExit
}

// The step as the dispatch runs it: its event names the command before it runs, bounded by the setup
// timeout and the dispatch's deadline; what it left running is swept before verify.
export async function setup(job: Job, dir: string): Promise<{ ok: true } | Failure> {
  const command = await setupCommand(dir, job.claim.dispatch.workspace.setup)
  await begin(job, 'setup', { command: command ?? null })
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
      ...(job.observation ? { observation: job.observation } : {}),
    }),
  )
  // Nothing setup started lives on into verify: a process left running could change the workspace
  // after it was checked. (Without an identity, setup's process group is stopped when setup exits.)
  if (job.identity) await sweep(job.identity)
  if (result.ok) return { ok: true }
  // cancelled meanwhile: the cancelled dispatch keeps the tail
  ensureActive(job, { tail: result.tail })
  const late = result.reason === SetupReason.SetupTimeout && untilDeadline(job) === 0
  const reason = late ? ExpiryReason.Deadline : result.reason
  const detail = `${result.command.join(' ')} exited ${result.exitCode} (${reason}); last output:\n${result.tail}`
  return { ok: false, reason, detail, exitCode: result.exitCode, tail: result.tail }
}
