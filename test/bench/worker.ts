// `npm run bench:worker`: what a trivial dispatch costs on the worker side. Real `preflight worker`
// processes (the built CLI, --concurrency 1 each, --agent-uid when run as root, as in production) drain
// N queued dispatches — clone a small repository, check three requirements, baseline, agent `true` —
// through fleets of 1, 4 and 16 workers against the built coordinator on a fresh PostgreSQL database.
// Prints, per fleet: dispatches per second, the workers' CPU per dispatch (each worker and the programs
// it ran and waited for: git, the agent, the sweeps) split by step from the workers' own
// preflight_worker_step_cpu_seconds_total, and RSS per idle and per busy worker. The baseline, measured
// in the same run: the same clone, agent and removal run directly, one after another, from this process
// (the floor of processes a dispatch must start). Asserts nothing; the database is dropped afterwards.
// BENCH_WORKER_DISPATCHES (64), BENCH_WORKER_FLEETS (1,4,16), BENCH_DATABASE_URL, BENCH_BIN,
// BENCH_WORKER_WAIT_WALK.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { FINAL_STATUSES, type Role } from '../../src/contract/index.js'
import { procStat } from '../../worker/proc-stat.js'
import { spawnCoordinator } from './coordinator-server.js'

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const BIN = process.env.BENCH_BIN ?? fileURLToPath(new URL('../../bin/preflight.js', import.meta.url))
const DISPATCHES = Number(process.env.BENCH_WORKER_DISPATCHES ?? 64)
const FLEETS = (process.env.BENCH_WORKER_FLEETS ?? '1,4,16').split(',').map(Number)
// Node's own options for each worker, e.g. `--cpu-prof --cpu-prof-dir=DIR` for a profile of its CPU
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
const AS_ROOT = process.getuid?.() === 0
// 0 for a build whose worker walks the world-writable directories on its first dispatch (before 0e7baa3):
// it never says it found them, so the benchmark does not wait for it
const WAIT_FOR_WALK = AS_ROOT && process.env.BENCH_WORKER_WAIT_WALK !== '0'
// slot uids of worker i: UID_BASE + i (each worker one slot); a range no user here has
const UID_BASE = 64_000
const TICK_MS = 10

const tokens = Object.fromEntries(
  (['orchestrator', 'worker', 'operator', 'admin'] as Role[]).map((role) => [
    role,
    `bench-${role}-${randomBytes(8).toString('hex')}`,
  ]),
) as Record<Role, string>

const STEPS = [
  'claim',
  'prepare',
  'setup',
  'verify',
  'report',
  'baseline',
  'agent',
  'complete',
  'cleanup',
  'sweep',
]

async function main() {
  const name = `preflight_bench_${randomBytes(4).toString('hex')}`
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(SERVER)
  url.pathname = `/${name}`
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} })
  const scratch = mkdtempSync(join(tmpdir(), 'preflight-bench-worker-'))
  // the slot uids pass through it to their workspaces (a workdir's own top is made 0711 by the worker)
  chmodSync(scratch, 0o755)
  const cleanup: (() => unknown)[] = [
    () => admin.unsafe(`drop database if exists ${name} with (force)`).then(() => admin.end()),
    () => sql.end(),
    () => rmSync(scratch, { recursive: true, force: true }),
  ]
  try {
    const bootstrap = Object.entries(tokens).map(([role, token]) => `${role}:${token}`)
    const server = await spawnCoordinator(url.toString(), bootstrap.join(','))
    cleanup.push(() => server.stop())
    const repo = fixtureRepo(scratch)
    await call(server.url, 'POST', '/v1/subagents', {
      name: 'bench-trivial',
      agent: { command: ['true'] },
      contextRequires: { paths: ['package.json'], exec: ['git'], git: { worktree: true, history: true } },
    })
    console.log(
      `# preflight worker benchmark (node ${process.version}, ${DISPATCHES} dispatches a fleet, ${AS_ROOT ? '--agent-uid' : "the worker's own uid"})`,
    )
    const floor = floorMs(repo, scratch)
    console.log(`baseline: clone + agent + removal run directly: ${floor.toFixed(1)} ms of CPU a dispatch\n`)
    console.log(
      "| workers | dispatches/s | CPU/dispatch | × baseline | worker's own | RSS idle | RSS busy | " +
        `${STEPS.join(' | ')} |`,
    )
    console.log(`|${' --- |'.repeat(7 + STEPS.length)}`)
    for (const size of FLEETS) {
      const fleet = await fleetRun(size, { url: server.url, repo, scratch, sql })
      const perStep = STEPS.map((step) => (((fleet.steps.get(step) ?? 0) * 1000) / DISPATCHES).toFixed(1))
      console.log(
        `| ${size} | ${fleet.rate.toFixed(2)} | ${fleet.cpuMs.toFixed(1)} ms | ${(fleet.cpuMs / floor).toFixed(2)} | ` +
          `${fleet.ownMs.toFixed(1)} ms | ` +
          `${fleet.rssIdle.toFixed(0)} MB | ${fleet.rssBusy.toFixed(0)} MB | ${perStep.join(' | ')} |`,
      )
    }
    console.log(
      "\nsteps: CPU ms a dispatch in each step (with --concurrency 1 each, exact); sweep: before a slot's first claim",
    )
  } finally {
    for (const release of cleanup.reverse())
      await Promise.resolve(release()).catch((e) => console.error(String(e)))
  }
}

interface Fleet {
  rate: number
  cpuMs: number
  // the worker process's own share of cpuMs (the rest: the programs it ran)
  ownMs: number
  rssIdle: number
  rssBusy: number
  steps: Map<string, number>
}

async function fleetRun(size: number, ctx: Ctx): Promise<Fleet> {
  const workers = await Promise.all(Array.from({ length: size }, (_, i) => startWorker(i, ctx)))
  try {
    const rssIdle = average(workers.map((w) => rssMb(w.pid)))
    await warmUp(workers, ctx)
    const before = workers.map((w) => cpuSplit(w.pid))
    const stepsBefore = await stepCpu(workers)
    const started = performance.now()
    let rssBusy = 0
    await drain(DISPATCHES, ctx, () => {
      rssBusy = Math.max(rssBusy, average(workers.map((w) => rssMb(w.pid))))
    })
    const seconds = (performance.now() - started) / 1000
    const after = workers.map((w) => cpuSplit(w.pid))
    const steps = await stepCpu(workers)
    for (const [step, seconds] of stepsBefore) steps.set(step, (steps.get(step) ?? 0) - seconds)
    const own = after.reduce((sum, [ms], i) => sum + ms - (before[i]?.[0] ?? 0), 0)
    const children = after.reduce((sum, [, ms], i) => sum + ms - (before[i]?.[1] ?? 0), 0)
    return {
      rate: DISPATCHES / seconds,
      cpuMs: (own + children) / DISPATCHES,
      ownMs: own / DISPATCHES,
      rssIdle,
      rssBusy,
      steps,
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop()))
  }
}

type Ctx = { url: string; repo: string; scratch: string; sql: postgres.Sql }

// Queues n trivial dispatches and waits until every one ended, succeeded; `tick` runs while it waits.
async function drain(n: number, ctx: Ctx, tick = () => {}): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const made = (await call(ctx.url, 'POST', '/v1/dispatches', {
      subagent: 'bench-trivial',
      workspace: { repo: ctx.repo },
    })) as { id: string }
    ids.push(made.id)
  }
  for (;;) {
    tick()
    const [row] = await ctx.sql`
      select count(*)::int as n from dispatches where id = any(${ids}) and status = any(${[...FINAL_STATUSES]})`
    if ((row?.n ?? 0) >= ids.length) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const bad =
    await ctx.sql`select id, status from dispatches where id = any(${ids}) and status <> 'succeeded'`
  if (bad.length > 0) {
    const view = await call(ctx.url, 'GET', `/v1/dispatches/${bad[0]?.id}`)
    throw new Error(`${bad.length} of the dispatches did not succeed, as:\n${JSON.stringify(view, null, 1)}`)
  }
  return ids
}

// Unmeasured dispatches until every worker has run one: a worker's first dispatch pays for what it
// does once (a build before 0e7baa3 walked the world-writable directories then; code loaded lazily).
async function warmUp(workers: Worker[], ctx: Ctx): Promise<void> {
  for (let round = 0; round < 10; round++) {
    await drain(workers.length, ctx)
    const ran = await ctx.sql`select distinct worker_id from dispatches where worker_id is not null`
    const ids = ran.map((r) => String(r.worker_id))
    if (workers.every((w) => ids.some((id) => id.endsWith(`-${w.pid}`)))) return
  }
  throw new Error('some workers ran no dispatch in 10 rounds of warm-up')
}

// The workers' CPU seconds by step, from their own counter (none from a build without it).
async function stepCpu(workers: Worker[]): Promise<Map<string, number>> {
  const steps = new Map<string, number>()
  for (const w of workers) {
    const text = await (await fetch(w.metrics)).text()
    for (const [, step, value] of text.matchAll(
      /^preflight_worker_step_cpu_seconds_total\{step="([^"]+)"\} (\S+)$/gm,
    ))
      steps.set(String(step), (steps.get(String(step)) ?? 0) + Number(value))
  }
  return steps
}

interface Worker {
  pid: number
  metrics: string
  stop(): Promise<void>
}

// One `preflight worker`, resolved once its metrics answer (it started and took its place).
function startWorker(i: number, ctx: { url: string; scratch: string }): Promise<Worker> {
  const workdir = mkdtempSync(join(ctx.scratch, `w${i}-`))
  const args = [BIN, 'worker', '--coordinator', ctx.url, '--workdir', workdir, '--concurrency', '1']
  args.push('--allow-local-repos', '--wait-ms', '1000', '--metrics-port', '0', '--log-level', 'info')
  if (AS_ROOT) args.push('--agent-uid', String(UID_BASE + i))
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PREFLIGHT_TOKEN: tokens.worker },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    let log = ''
    const read = (chunk: Buffer) => {
      log = (log + chunk.toString('utf8')).slice(-16_384)
      const metrics = /metrics on (http:\/\/[^\s"]+)/.exec(log)?.[1]
      // with --agent-uid, once its one walk for world-writable directories is done: a start-up cost
      if (!metrics || (WAIT_FOR_WALK && !log.includes('found the world-writable directories'))) return
      child.stdout?.off('data', read)
      child.stderr?.off('data', read)
      // drained from now on: a worker whose log pipe fills would wait on it
      child.stdout?.resume()
      child.stderr?.resume()
      resolve({ pid: child.pid ?? 0, metrics, stop: () => stop(child) })
    }
    child.stdout?.on('data', read)
    child.stderr?.on('data', read)
    child.once('exit', (code) => reject(new Error(`a worker exited (${code}) before it started:\n${log}`)))
  })
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

// The floor: what a dispatch's own programs cost run directly — git clone of the same repository, the
// agent, the removal — as CPU of this process's children, over 20 rounds.
function floorMs(repo: string, scratch: string): number {
  const rounds = 20
  const before = cpuMs(process.pid)
  for (let i = 0; i < rounds; i++) {
    const dir = join(scratch, `floor-${i}`)
    execFileSync('git', ['clone', '-q', '--no-hardlinks', repo, dir], { stdio: 'ignore' })
    execFileSync('true', [], { cwd: dir })
    execFileSync('rm', ['-rf', '--', dir])
  }
  return (cpuMs(process.pid) - before) / rounds
}

// A small committed repository: the package.json the definition asks for and a few sources.
function fixtureRepo(scratch: string): string {
  const dir = join(scratch, 'repo')
  execFileSync('mkdir', ['-p', join(dir, 'src')])
  writeFileSync(join(dir, 'package.json'), '{ "name": "bench" }\n')
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'src', `m${i}.ts`), `export const m${i} = ${i}\n`)
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      ['-c', 'user.name=b', '-c', 'user.email=b@b', '-c', 'maintenance.auto=false', ...args],
      {
        cwd: dir,
        stdio: 'ignore',
      },
    )
  git('init', '-q')
  git('add', '.')
  git('commit', '-qm', 'bench')
  return dir
}

// utime + stime + cutime + cstime of a process, in ms: its own CPU and its waited-for children's.
function cpuMs(pid: number): number {
  const [own, children] = cpuSplit(pid)
  return own + children
}

// [utime + stime, cutime + cstime] in ms: the process's own CPU, its waited-for children's.
function cpuSplit(pid: number): [number, number] {
  const [utime = 0, stime = 0, cutime = 0, cstime = 0] = procStat([14, 15, 16, 17], pid)
  return [(utime + stime) * TICK_MS, (cutime + cstime) * TICK_MS]
}

function rssMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb ?? 0) / 1024
}

const average = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

async function call(url: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokens.orchestrator}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
