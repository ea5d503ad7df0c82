// The CLI run in this process as the binary runs it (main(), the same exit codes), its stdout and stderr
// captured and `env` set for the call: no process to spawn per case. Cases about the binary itself
// (exit status, a real environment, signals) still spawn bin/preflight.js.
import { expect, vi } from 'vitest'
import { main } from '../../src/cli/main.js'

export interface CliRun {
  exitCode: number
  stdout: string
  stderr: string
}

export async function runCli(argv: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values))
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
  }
  let stdout = ''
  let stderr = ''
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk)
    return true
  })
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  set(env)
  try {
    return { exitCode: await main(argv), stdout, stderr }
  } finally {
    set(saved)
    out.mockRestore()
    err.mockRestore()
  }
}

// A command refused before it starts anything, in this process: no PREFLIGHT_* variable but those in
// `env` (as a fresh process would see), and no SIGTERM/SIGINT handler left installed (a refusal that
// came after the command installed its handlers fails here).
export async function runRefused(argv: string[], env: Record<string, string | undefined> = {}) {
  const others = Object.keys(process.env).filter((k) => k.startsWith('PREFLIGHT_'))
  const handlers = process.listenerCount('SIGTERM') + process.listenerCount('SIGINT')
  const run = await runCli(argv, { ...Object.fromEntries(others.map((k) => [k, undefined])), ...env })
  expect(process.listenerCount('SIGTERM') + process.listenerCount('SIGINT')).toBe(handlers)
  return { code: run.exitCode, stderr: run.stderr }
}
