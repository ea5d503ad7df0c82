// Real processes for the end-to-end tests: a coordinator, workers, and the HTTP calls of an orchestrator.
// (Suites that only call the coordinator's API serve it in the test process: `serveCoordinator`.)
import { type ChildProcess, spawn } from 'node:child_process'
import { chmod, mkdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { createClient } from '../../src/client/index.js'
import { FINAL_STATUSES, isFinal } from '../../src/contract/final.js'
import type { DispatchView, Role, SubagentDefinition } from '../../src/contract/index.js'
import { syncBootstrapTokens } from '../../src/coordinator/http/auth.js'
import { type RunningServer, startServer } from '../../src/coordinator/server.js'
import { createTestDatabase, type TestDatabase } from './db.js'
import { makeRepo, tempDir } from './git-fixtures.js'
import { waitFor } from './wait.js'

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'preflight.js')
export const TOKENS = {
  orchestrator: 'e2e-orchestrator-token-0123456789abcdef',
  worker: 'e2e-worker-token-0123456789abcdef',
  operator: 'e2e-operator-token-0123456789abcdef',
}
const BOOTSTRAP = Object.entries(TOKENS)
  .map(([role, token]) => `${role}:${token}`)
  .join(',')

// Every process a suite starts; `killAll` in afterAll ends whatever is still running.
const children = new Set<ChildProcess>()
// Every coordinator a suite serves in the test process, stopped in afterAll.
const servers = new Set<RunningServer>()

export interface Proc {
  child: ChildProcess
  output: () => string
  // the JSON records of output() (the log is JSON off a terminal); a line cut by the window is skipped
  records: () => Record<string, unknown>[]
  stop(signal?: NodeJS.Signals): Promise<void>
  // resolves with the exit code (null when a signal ended it)
  exited: Promise<number | null>
}

// `wrapper` runs the binary under another program (setpriv, to drop capabilities); with `stallStdout`
// nobody reads its stdout (a log shipper that hangs).
function start(
  args: string[],
  env: Record<string, string | undefined>,
  wrapper: string[] = [],
  stallStdout = false,
): Proc {
  const [file = process.execPath, ...rest] = [...wrapper, process.execPath, BIN, ...args]
  const child = spawn(file, rest, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let out = ''
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-64_000)
  }
  if (stallStdout) child.stdout?.pause()
  else child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      children.delete(child)
      r(code)
    }),
  )
  return {
    child,
    exited,
    output: () => out,
    records: () => out.split('\n').flatMap(jsonRecord),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
    },
  }
}

// Starts reading the stdout of a process started with `stallStdout`: its records from now to its end,
// those that waited first.
export function readStalled(proc: Proc): () => Record<string, unknown>[] {
  const records: Record<string, unknown>[] = []
  let partial = ''
  proc.child.stdout?.setEncoding('utf8')
  proc.child.stdout?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) records.push(JSON.parse(line) as Record<string, unknown>)
  })
  proc.child.stdout?.resume()
  return () => records
}

function jsonRecord(line: string): Record<string, unknown>[] {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null ? [value as Record<string, unknown>] : []
  } catch {
    return []
  }
}

export async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((r) => {
          if (child.exitCode !== null || child.signalCode !== null) return r()
          child.once('exit', () => r())
          child.kill('SIGKILL')
        }),
    ),
  )
}

export interface Suite {
  db: TestDatabase
  // a directory for the suite's markers and workdirs
  scratch: string
  // a git repository with `files`, to dispatch against
  repo: string
}

// One suite's fresh database, scratch directory and sample repository, made before its tests and
// removed after them together with every process the suite started. Read the fields inside tests
// and hooks: they are set when the suite starts.
export function e2eSuite(files: Record<string, string> = { 'package.json': '{}\n' }): Suite {
  const suite = {} as Suite
  beforeAll(async () => {
    suite.db = await createTestDatabase()
    suite.scratch = await tempDir('preflight-e2e-')
    suite.repo = await makeRepo(files)
  })
  afterAll(async () => {
    await killAll()
    await Promise.all([...servers].map((server) => server.stop()))
    servers.clear()
    await suite.db?.drop()
    const dirs = [suite.scratch, suite.repo].filter(Boolean)
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
  })
  return suite
}

// For a suite whose agents run as other uids (--agent-uid): its scratch directory (0700, the test's)
// becomes passable (0711), and an outbox in it writable by every uid is the agents' one way to tell the
// test what they saw.
export async function agentOutbox(suite: Suite): Promise<string> {
  await chmod(suite.scratch, 0o711)
  const outbox = join(suite.scratch, 'outbox')
  await mkdir(outbox)
  await chmod(outbox, 0o1777)
  return outbox
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

export interface Coordinator extends Proc {
  url: string
}

// The coordinator served by the test process on the suite's database, as `preflight coordinator`
// serves it (the same server, tokens and short leases as startCoordinator): for suites that call its
// API and never stop or kill it. A coordinator process costs ~1.2 s of CPU to start, most of it
// loading modules this process has loaded already; the coordinator as a process is the subject of
// resilience.test.ts and test/cli/coordinator.test.ts.
export async function serveCoordinator(
  suite: Suite,
  leaseMs = 3_000,
): Promise<{ url: string; stop(): Promise<void> }> {
  const tokens = Object.entries(TOKENS).map(([role, token]) => ({ role: role as Role, token }))
  await syncBootstrapTokens(suite.db.db.orm, tokens)
  const server = await startServer({
    db: suite.db.db,
    port: 0,
    host: '127.0.0.1',
    config: { leaseMs, sweepIntervalMs: 250 },
  })
  servers.add(server)
  return { url: server.url, stop: () => server.stop() }
}

// Short leases and sweeps so a dead worker's dispatch comes back within seconds.
export async function startCoordinator(
  databaseUrl: string,
  port?: number,
  leaseMs = 3_000,
): Promise<Coordinator> {
  const p = port ?? (await freePort())
  const args = [
    '--port',
    String(p),
    '--database-url',
    databaseUrl,
    '--lease-ms',
    String(leaseMs),
    '--sweep-ms',
    '250',
  ]
  const proc = start(['coordinator', ...args], {
    PATH: process.env.PATH,
    PREFLIGHT_BOOTSTRAP_TOKENS: BOOTSTRAP,
  })
  const url = `http://127.0.0.1:${p}`
  await waitFor(
    () =>
      client(url, '')
        .getReadiness()
        .then(
          (r) => r.status === 'ok',
          () => false,
        ),
    { timeoutMs: 30_000, everyMs: 100, what: () => proc.output() },
  )
  return { ...proc, url }
}

export interface SpawnOptions {
  workdir: string
  roots?: string[]
  env?: Record<string, string>
  id?: string
  args?: string[]
  // the suites' repositories are local directories: --allow-local-repos unless this is false
  allowLocalRepos?: boolean
  wrapper?: string[]
  stallStdout?: boolean
}

export function spawnWorker(url: string, opts: SpawnOptions): Proc {
  const args = ['worker', '--coordinator', url, '--workdir', opts.workdir, '--wait-ms', '1000']
  for (const root of opts.roots ?? []) args.push('--workspace-root', root)
  if (opts.id) args.push('--worker-id', opts.id)
  if (opts.allowLocalRepos ?? true) args.push('--allow-local-repos')
  args.push(...(opts.args ?? []))
  return start(
    args,
    { PATH: process.env.PATH, HOME: process.env.HOME, PREFLIGHT_TOKEN: TOKENS.worker, ...opts.env },
    opts.wrapper,
    opts.stallStdout,
  )
}

// The orchestrator's and operator's calls, on preflight/client: one try each, a refusal thrown.
export const client = (url: string, token: string) => createClient({ url, token, retry: false })

export function call<T = unknown>(url: string, method: string, path: string, token: string, body?: unknown) {
  return client(url, token).request<T>(method, path, { body })
}

export type { DispatchView }

// as an array: the soak test hands it to SQL
export const TERMINAL: string[] = [...FINAL_STATUSES]

export async function register(url: string, definition: Record<string, unknown>): Promise<void> {
  await client(url, TOKENS.orchestrator).registerSubagent(definition as SubagentDefinition)
}

export async function dispatch(url: string, subagent: string, workspace: Record<string, unknown>) {
  return (await client(url, TOKENS.orchestrator).createDispatch({ subagent, workspace })).id
}

export function getDispatch(url: string, id: string): Promise<DispatchView> {
  return client(url, TOKENS.orchestrator).getDispatch(id)
}

// Long-polls the dispatch until it is final (woken at once by the coordinator); a coordinator that is
// down or restarting meanwhile is asked again.
export async function waitForStatus(url: string, id: string, timeoutMs = 30_000, procs: Proc[] = []) {
  const deadline = Date.now() + timeoutMs
  let last: DispatchView | undefined
  while (Date.now() < deadline) {
    try {
      last = await client(url, TOKENS.orchestrator).waitForDispatch(id, { timeoutMs: deadline - Date.now() })
      if (isFinal(last.status)) return last
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const outputs = procs.map((p) => p.output()).join('\n---\n')
  throw new Error(`timed out after ${timeoutMs} ms\n${JSON.stringify(last)}\n${outputs}`)
}

// Worker steps of one attempt, in the order the coordinator recorded them.
export function stepsOf(d: DispatchView, attempt = d.attempt): string[] {
  return d.events.filter((e) => e.attempt === attempt).map((e) => e.step)
}

// What a failed expectation on how a dispatch ended should show: its completion and steps too.
export const ending = (d: DispatchView) => ({ status: d.status, completion: d.completion, steps: stepsOf(d) })

export function fakeAgent(marker: string, sleepSeconds = 0): string[] {
  const script = `echo "$$" >> ${JSON.stringify(marker)}; sleep ${sleepSeconds}; echo done >> ${JSON.stringify(`${marker}.done`)}`
  return ['sh', '-c', script]
}

export const markerIn = (dir: string) => join(dir, 'agent-ran')
