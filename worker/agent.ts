// The agent step: agent.command with the agent environment, its output streamed to the worker log.
import type { AgentIdentity } from './identity.js'
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
}

export function runAgent(opts: AgentOptions): Promise<RunResult> {
  return runProcess(opts.command, {
    cwd: opts.workspace,
    env: opts.env,
    signal: opts.signal,
    onLine: opts.onLine,
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.identity ? { identity: opts.identity } : {}),
  })
}
