// Runs the real `preflight coordinator` in its own process (its own event loop, as in production)
// and resolves with its URL once it listens; stop() sends SIGTERM and waits for the exit.
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// BENCH_BIN: another build's bin/preflight.js, to compare two builds on the same machine state.
const BIN = process.env.BENCH_BIN ?? fileURLToPath(new URL('../../bin/preflight.js', import.meta.url))

export interface SpawnedCoordinator {
  url: string
  pid: number
  stop(): Promise<void>
}

export function spawnCoordinator(
  databaseUrl: string,
  bootstrapTokens: string,
  bin = BIN,
): Promise<SpawnedCoordinator> {
  // BENCH_CPU_PROF=<dir>: the coordinator writes a V8 CPU profile there when it exits.
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF]
    : []
  const child = spawn(
    process.execPath,
    [...profile, bin, 'coordinator', '--port', '0', '--host', '127.0.0.1', '--database-url', databaseUrl],
    {
      env: { ...process.env, PREFLIGHT_BOOTSTRAP_TOKENS: bootstrapTokens },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  live.add(child)
  child.once('exit', () => live.delete(child))
  return new Promise((resolve, reject) => {
    // Read until it listens, then only drained: its access log (a line per request) is read at once so
    // its writes never wait on a full pipe, and never searched again (a growing string scanned per
    // chunk cost the client more CPU than the requests, and the coordinator its blocked writes).
    let log = ''
    child.stderr?.setEncoding('utf8')
    // a coordinator that never says where it listens (a build that logs otherwise, a hang at start)
    // fails the run instead of holding it forever
    const tooLong = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the coordinator did not listen within ${LISTEN_WITHIN_MS} ms:\n${log}`))
    }, LISTEN_WITHIN_MS)
    child.once('exit', () => clearTimeout(tooLong))
    const untilListening = (chunk: string) => {
      log = (log + chunk).slice(-16_384)
      const url = /listening on (http:\/\/[^\s"]+)/.exec(log)?.[1]
      if (!url) return
      clearTimeout(tooLong)
      child.stderr?.off('data', untilListening)
      child.stderr?.resume()
      resolve({ url, pid: child.pid ?? 0, stop: () => stop(child) })
    }
    child.stderr?.on('data', untilListening)
    child.once('exit', (code) =>
      reject(new Error(`the coordinator exited (${code}) before listening:\n${log}`)),
    )
    child.once('error', reject)
  })
}

const LISTEN_WITHIN_MS = 60_000

// A benchmark stopped by a signal (`kill`, a CI timeout) stops the coordinators it started, which are in
// its process group only when a terminal sent the signal to the whole group.
const live = new Set<ChildProcess>()
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    for (const child of live) child.kill('SIGTERM')
    process.kill(process.pid, signal)
  })

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}
