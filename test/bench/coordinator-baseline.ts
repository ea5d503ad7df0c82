// `npm run bench:coordinator -- --baseline REF [--gate RATIO]`: the dispatch cycle of REF (built in a
// temporary git worktree) against the working tree's build, interleaved — A B, B A, A B, … — each run
// on a fresh database with its own coordinator process. Prints each run's CPU per cycle (coordinator
// and PostgreSQL backends, in its least disturbed window) and the ratio B/A of each pair; with --gate, fails
// (exit 1) when the median of those ratios is above RATIO. CPU per cycle, not wall time: it is the
// figure that holds on a shared machine (docs/benchmarks.md).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import type { Role } from '../../src/contract/index.js'
import type { CpuSpent } from './coordinator-cpu.js'
import { measureCycles } from './coordinator-cycles.js'
import { spawnCoordinator } from './coordinator-server.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface BaselineOptions {
  ref: string
  // fail when the median ratio B/A of CPU per cycle is above this
  gate?: number
  pairs: number
  // measured seconds per run, cut into `rounds` windows (after a 2 s warm-up)
  seconds: number
  rounds: number
  server: string
  tokens: Record<Role, string>
}

interface Run {
  rate: number
  cpu: CpuSpent
}

const perCycle = (cpu: CpuSpent) => cpu.coordinator + cpu.postgres

// Answers whether the gate held (true without a gate).
export async function runBaselineComparison(opts: BaselineOptions): Promise<boolean> {
  let commit: string
  try {
    commit = git('rev-parse', '--verify', '--quiet', `${opts.ref}^{commit}`)
  } catch {
    throw new Error(`--baseline ${opts.ref}: not a commit of this repository`)
  }
  const head = git('rev-parse', '--short', 'HEAD')
  const changed = git('status', '--porcelain', '--untracked-files=no') !== ''
  console.log(`# baseline comparison: A = ${opts.ref} (${commit.slice(0, 12)})`)
  console.log(`# B = the working tree (HEAD ${head}${changed ? ', with uncommitted changes' : ''})`)
  removeLeftWorktrees()
  const built = buildCommit(commit)
  // Interrupted (Ctrl-C, a CI job cancelled), the worktree goes first; the next run removes what a
  // harder stop left (removeLeftWorktrees).
  const interrupted = (signal: NodeJS.Signals) => {
    built.remove()
    process.kill(process.pid, signal)
  }
  process.once('SIGINT', interrupted)
  process.once('SIGTERM', interrupted)
  try {
    const bins = { A: built.bin, B: join(ROOT, 'bin', 'preflight.js') }
    const ratios: { total: number; coordinator: number; postgres: number; rate: number }[] = []
    console.log(
      `# ${opts.pairs} pairs, each run ${opts.rounds} windows of ${(opts.seconds / opts.rounds).toFixed(1)} s after a 2 s warm-up; CPU ms per cycle in the least disturbed window`,
    )
    console.log(
      '| pair | load | A cycles/s | A coordinator + postgres | B cycles/s | B coordinator + postgres | B/A |',
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- |')
    for (let pair = 1; pair <= opts.pairs; pair++) {
      const load = loadavg()[0]?.toFixed(1)
      // A B, then B A: a machine that warms or cools during the run favours neither side
      const runs: Partial<Record<'A' | 'B', Run>> = {}
      for (const side of pair % 2 === 1 ? (['A', 'B'] as const) : (['B', 'A'] as const))
        runs[side] = await measureBuild(bins[side], opts)
      const { A: a, B: b } = runs as Record<'A' | 'B', Run>
      const ratio = {
        total: perCycle(b.cpu) / perCycle(a.cpu),
        coordinator: b.cpu.coordinator / a.cpu.coordinator,
        postgres: b.cpu.postgres / a.cpu.postgres,
        rate: b.rate / a.rate,
      }
      ratios.push(ratio)
      const cell = (run: Run) =>
        `${run.cpu.coordinator.toFixed(2)} + ${run.cpu.postgres.toFixed(2)} = ${perCycle(run.cpu).toFixed(2)}`
      console.log(
        `| ${pair} | ${load} | ${a.rate.toFixed(0)} | ${cell(a)} | ${b.rate.toFixed(0)} | ${cell(b)} | ${ratio.total.toFixed(3)} |`,
      )
    }
    const med = (key: keyof (typeof ratios)[number]) => median(ratios.map((r) => r[key]))
    console.log(
      `median B/A: CPU per cycle ${med('total').toFixed(3)} (coordinator ${med('coordinator').toFixed(3)}, postgres ${med('postgres').toFixed(3)}); cycles/s ${med('rate').toFixed(3)}`,
    )
    if (opts.gate === undefined) return true
    const held = med('total') <= opts.gate
    console.log(
      held
        ? `gate: ${med('total').toFixed(3)} ≤ ${opts.gate}: held`
        : `gate: ${med('total').toFixed(3)} > ${opts.gate}: the cycle costs more CPU than ${opts.ref}`,
    )
    return held
  } finally {
    process.off('SIGINT', interrupted)
    process.off('SIGTERM', interrupted)
    built.remove()
  }
}

// Worktrees of an earlier run killed before it could remove its own (a temp directory named
// preflight-bench-*): removed, so they pile up neither in `git worktree list` nor on the disk.
function removeLeftWorktrees(): void {
  const mine = join(tmpdir(), 'preflight-bench-')
  for (const line of git('worktree', 'list', '--porcelain').split('\n')) {
    const dir = line.startsWith('worktree ') ? line.slice('worktree '.length) : ''
    if (!dir.startsWith(mine)) continue
    console.log(`# removing the worktree an interrupted run left: ${dir}`)
    git('worktree', 'remove', '--force', dir)
    rmSync(join(dir, '..'), { recursive: true, force: true })
  }
  git('worktree', 'prune')
}

// One run: a fresh database, the build's coordinator, 4 HTTP workers; the database is dropped after.
async function measureBuild(bin: string, opts: BaselineOptions): Promise<Run> {
  const database = `preflight_bench_${Math.random().toString(16).slice(2, 10)}`
  const admin = postgres(opts.server, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${database}`)
  try {
    const url = new URL(opts.server)
    url.pathname = `/${database}`
    const bootstrap = Object.entries(opts.tokens).map(([role, token]) => `${role}:${token}`)
    const server = await spawnCoordinator(url.toString(), bootstrap.join(','), bin)
    try {
      const { cycles } = await measureCycles({
        url: server.url,
        pid: server.pid,
        database,
        tokens: opts.tokens,
        seconds: opts.seconds,
        rounds: opts.rounds,
        workers: 4,
      })
      return { rate: cycles.rate, cpu: cycles.best }
    } finally {
      await server.stop()
    }
  } finally {
    await admin.unsafe(`drop database if exists ${database} with (force)`)
    await admin.end()
  }
}

// A detached worktree of `commit` with its own build; node_modules is the working tree's when the two
// lockfiles agree, else installed from the commit's lockfile.
function buildCommit(commit: string) {
  const dir = join(mkdtempSync(join(tmpdir(), 'preflight-bench-')), 'tree')
  const remove = () => {
    try {
      git('worktree', 'remove', '--force', dir)
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
      git('worktree', 'prune')
    }
  }
  try {
    git('worktree', 'add', '--detach', '--quiet', dir, commit)
    const lock = (root: string) => readFileSync(join(root, 'package-lock.json'), 'utf8')
    if (lock(dir) === lock(ROOT)) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
    else {
      console.log(`# installing ${commit.slice(0, 12)}'s dependencies (its lockfile differs)`)
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'inherit'],
      })
    }
    console.log(`# building ${commit.slice(0, 12)} in ${dir}`)
    execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
  } catch (err) {
    remove()
    throw err
  }
  return { bin: join(dir, 'bin', 'preflight.js'), remove }
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}
