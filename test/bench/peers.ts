// `npm run bench:peers`: preflight's dispatch cycle over HTTP beside graphile-worker and pg-boss in
// process, on the same PostgreSQL, taking turns (preflight, graphile-worker, pg-boss, then again in the
// other order). Each runs 4 closed loops: create → claim → complete one at a time (preflight sends its
// report between claim and complete; the peers have none). Per cycle: cycles/s; CPU of its process(es)
// and of the database's backends; commits, rows inserted, updated and deleted (pg_stat_database), and
// the cluster's WAL. The peers are installed on demand (BENCH_PEERS, the versions of the comparison) into
// node_modules/.cache/preflight-bench-peers. Asserts nothing; each database is dropped afterwards.
// Beside them, the floor of preflight's cycle: the CPU of its requests a cycle as GET /healthz (no
// database: the coordinator's and its clients' HTTP alone), and what it bounds (below).
// BENCH_DATABASE_URL, BENCH_PEERS ("graphile-worker@0.17.3 pg-boss@10.4.2"), BENCH_PEERS_SECONDS (8),
// BENCH_PEERS_ROUNDS (2).
import { execFileSync, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import type { Role } from '../../src/contract/index.js'
import { cpuSince, measureWindows, sampleCpu } from './coordinator-cpu.js'
import { healthzRate, measureCycles } from './coordinator-cycles.js'
import { spawnCoordinator } from './coordinator-server.js'
import { type Counters, diffCounters, readCounters, SETTLE_MS } from './coordinator-steps.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const PEERS = (process.env.BENCH_PEERS ?? 'graphile-worker@0.17.3 pg-boss@10.4.2').split(' ').filter(Boolean)
const SECONDS = Number(process.env.BENCH_PEERS_SECONDS ?? 8)
const ROUNDS = Number(process.env.BENCH_PEERS_ROUNDS ?? 2)

const tokens = Object.fromEntries(
  (['orchestrator', 'worker', 'operator', 'admin'] as const).map((r) => [
    r,
    `bench-${r}-${randomBytes(8).toString('hex')}`,
  ]),
) as Record<Role, string>

interface Run {
  cycles: number
  seconds: number
  // CPU ms: the system's own process(es) (preflight: the coordinator and its HTTP workers), its backends
  own: number
  postgres: number
  writes: Counters
  // preflight: its requests a cycle, and the CPU ms of a GET /healthz (coordinator and client)
  floor?: { requests: number; healthz: number }
}

// Installs the peers once per version list; answers the directory they are in.
function installPeers(): string {
  const dir = join(ROOT, 'node_modules', '.cache', 'preflight-bench-peers')
  const stamp = join(dir, 'installed.txt')
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === PEERS.join(' ')) return dir
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), '{ "private": true }\n')
  console.log(`# installing ${PEERS.join(', ')} into ${dir}`)
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...PEERS], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  writeFileSync(stamp, PEERS.join(' '))
  return dir
}

// A fresh database for one run, dropped after it.
async function withDatabase<T>(work: (url: string, name: string) => Promise<T>): Promise<T> {
  const name = `preflight_bench_${randomBytes(4).toString('hex')}`
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  try {
    const url = new URL(SERVER)
    url.pathname = `/${name}`
    return await work(url.toString(), name)
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`)
    await admin.end()
  }
}

// The counters once every backend of the run has flushed its statistics (idle ones within 10 s).
async function settledCounters(url: string): Promise<Counters> {
  await sleep(SETTLE_MS)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    return await readCounters(sql)
  } finally {
    await sql.end()
  }
}

async function runPreflight(): Promise<Run> {
  return withDatabase(async (url, database) => {
    const server = await spawnCoordinator(
      url,
      Object.entries(tokens)
        .map(([r, t]) => `${r}:${t}`)
        .join(','),
    )
    try {
      // registration and a 2 s warm-up
      await measureCycles({
        url: server.url,
        pid: server.pid,
        database,
        tokens,
        seconds: 0.5,
        rounds: 1,
        workers: 4,
      })
      const before = await settledCounters(url)
      const cpu = sampleCpu(server.pid, database)
      const started = performance.now()
      const { cycles, timings } = await measureCycles({
        url: server.url,
        pid: server.pid,
        database,
        tokens,
        seconds: SECONDS,
        rounds: 1,
        workers: 4,
        warmUpMs: 0,
      })
      const seconds = (performance.now() - started) / 1000
      const spent = cpuSince(cpu, sampleCpu(server.pid, database))
      const after = await settledCounters(url)
      const healthz = await measureWindows(
        3,
        () => sampleCpu(server.pid, database),
        () => healthzRate(server.url, 4, 1000),
      )
      const requests = Object.values(timings).reduce((n, ms) => n + ms.length, 0) / timings.complete.length
      return {
        cycles: cycles.units,
        seconds,
        own: spent.coordinator + spent.client,
        postgres: spent.postgres,
        writes: diffCounters(after, before, 1),
        floor: { requests, healthz: healthz.best.coordinator + healthz.best.client },
      }
    } finally {
      await server.stop()
    }
  })
}

async function runPeer(peer: string, dir: string): Promise<Run> {
  return withDatabase(async (url, database) => {
    const child = fork(fileURLToPath(new URL('./peers-child.ts', import.meta.url)), [peer, dir, url], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const answer = () =>
      new Promise<{ units?: number }>((resolve, reject) => {
        child.once('message', resolve)
        child.once('exit', (code) => reject(new Error(`${peer} exited (${code})`)))
      })
    const pid = child.pid ?? 0
    try {
      await answer()
      // a warm-up of 2 s, as preflight's
      child.send({ cmd: 'run', ms: 2000 })
      await answer()
      const before = await settledCounters(url)
      const cpu = sampleCpu(pid, database)
      const started = performance.now()
      child.send({ cmd: 'run', ms: SECONDS * 1000 })
      const { units = 0 } = await answer()
      const seconds = (performance.now() - started) / 1000
      const spent = cpuSince(cpu, sampleCpu(pid, database))
      const after = await settledCounters(url)
      return {
        cycles: units,
        seconds,
        own: spent.coordinator,
        postgres: spent.postgres,
        writes: diffCounters(after, before, 1),
      }
    } finally {
      child.send({ cmd: 'stop' })
      await new Promise((resolve) => child.once('exit', resolve))
    }
  })
}

async function main() {
  const dir = installPeers()
  const names = ['preflight', ...PEERS.map((spec) => spec.replace(/@[^@]*$/, ''))]
  const runs = new Map<string, Run[]>(names.map((n) => [n, []]))
  console.log(
    `# preflight over HTTP against ${PEERS.join(', ')} in process (node ${process.version}), ${ROUNDS} turns of ${SECONDS} s each`,
  )
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse()
    for (const name of order) {
      const load = loadavg()[0]?.toFixed(1)
      const run = name === 'preflight' ? await runPreflight() : await runPeer(name, dir)
      runs.get(name)?.push(run)
      console.log(
        `  turn ${round + 1}, ${name}: ${(run.cycles / run.seconds).toFixed(0)} cycles/s, load ${load}`,
      )
    }
  }
  const ours = summary(runs.get('preflight') ?? [])
  console.log(
    '\n| system | cycles/s | × preflight | CPU ms a cycle: own + postgres | commits | rows inserted | updated | deleted | WAL |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const name of names) {
    const s = summary(runs.get(name) ?? [])
    console.log(
      `| ${name} | ${s.rate.toFixed(0)} | ${(s.rate / ours.rate).toFixed(2)} | ${s.own.toFixed(2)} + ${s.postgres.toFixed(2)} | ` +
        `${s.commits.toFixed(2)} | ${s.inserted.toFixed(2)} | ${s.updated.toFixed(2)} | ${s.deleted.toFixed(2)} | ${s.walKb.toFixed(2)} kB |`,
    )
  }
  floorBound(runs)
  console.log(
    "\nper cycle; cycles/s of the fastest turn (the least disturbed), the rest summed over every turn; WAL is the cluster's (other users of the server add to it)",
  )
}

// A preflight cycle holds a peer's: statements through a driver, a job's rows inserted, claimed and
// finished in PostgreSQL (and more: the report, the events). Over HTTP it adds its requests, each at
// least a GET /healthz for the coordinator and its client. So its CPU a cycle is at least the peer's
// plus that floor; where CPU binds (2 cores, everything on them), its rate at most peer / (peer + floor)
// of the peer's, whatever the coordinator's own code costs.
function floorBound(runs: Map<string, Run[]>) {
  const floors = (runs.get('preflight') ?? []).flatMap((r) => (r.floor ? [r.floor] : []))
  if (floors.length === 0) return
  const requests = floors.reduce((n, f) => n + f.requests, 0) / floors.length
  const healthz = Math.min(...floors.map((f) => f.healthz))
  const floor = requests * healthz
  console.log(
    `\nthe floor of a preflight cycle: ${requests.toFixed(2)} requests × ${healthz.toFixed(3)} ms (GET /healthz, coordinator and client, the least of the turns) = ${floor.toFixed(2)} ms of CPU`,
  )
  for (const [name, peer] of runs) {
    if (name === 'preflight') continue
    const s = summary(peer)
    const cpu = s.own + s.postgres
    console.log(
      `  ${name}: ${cpu.toFixed(2)} ms a cycle; preflight at least ${(cpu + floor).toFixed(2)}: at most ${(cpu / (cpu + floor)).toFixed(2)}× its rate where CPU binds`,
    )
  }
}

function summary(runs: Run[]) {
  const cycles = runs.reduce((n, r) => n + r.cycles, 0) || 1
  const sum = (f: (r: Run) => number) => runs.reduce((n, r) => n + f(r), 0) / cycles
  return {
    rate: Math.max(0, ...runs.map((r) => r.cycles / r.seconds)),
    own: sum((r) => r.own),
    postgres: sum((r) => r.postgres),
    commits: sum((r) => r.writes.commits),
    inserted: sum((r) => r.writes.inserted),
    updated: sum((r) => r.writes.updated),
    deleted: sum((r) => r.writes.deleted),
    walKb: sum((r) => r.writes.wal) / 1024,
  }
}

await main()
