// Start-up of the `preflight` binary against a bare `node -e 0`, measured in the same run: every round
// runs each command once, in an order that rotates, and the medians are compared (as hyperfine would,
// interleaved so that the machine's load falls on all alike). `preflight check` with git requirements
// is compared with `node` running the same git process. `node --import tsx test/bench/startup.ts` runs it
// alone; BENCH_STARTUP_ROUNDS (default 40); BENCH_STARTUP_BINS=label=path,… adds builds to compare.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '../..')
export const TARGET = 1.5

interface Case {
  label: string
  args: string[]
  // the label of the case this one is compared with
  floor?: string
  // a build given to compare may lack a command (--version before there was one)
  mayFail?: boolean
  // the exit code it ends with (0 unless said)
  status?: number
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? Number.NaN

// A committed repository with the file the sets ask for: every requirement met, nothing walked.
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'preflight-startup-'))
  writeFileSync(join(dir, 'package.json'), '{}\n')
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], { cwd: dir, stdio: 'ignore' })
  git('init', '-q')
  git('add', '.')
  git('commit', '-qm', 'bench')
  writeFileSync(join(dir, 'plain.json'), JSON.stringify({ paths: ['package.json'], exec: ['node', 'git'] }))
  writeFileSync(
    join(dir, 'git.json'),
    JSON.stringify({ paths: ['package.json'], exec: ['node'], git: { worktree: true, history: true } }),
  )
  return dir
}

function cases(ws: string, bins: [string, string][]): Case[] {
  // the one git process `check` runs for a worktree (worker/checks/git.ts)
  const gitArgs = [
    'rev-parse',
    '--is-inside-work-tree',
    '--is-shallow-repository',
    '--show-toplevel',
    '--verify',
    '--quiet',
    'HEAD^{commit}',
  ]
  const withGit = `require('node:child_process').spawnSync('git', ${JSON.stringify(gitArgs)}, { cwd: ${JSON.stringify(ws)} })`
  const list: Case[] = [
    { label: 'node -e 0', args: ['-e', '0'] },
    { label: 'node + git rev-parse', args: ['-e', withGit] },
  ]
  for (const [name, bin] of bins) {
    const mayFail = name !== 'preflight'
    list.push(
      { label: `${name} --version`, args: [bin, '--version'], floor: 'node -e 0', mayFail },
      {
        label: `${name} check (paths, exec)`,
        args: [bin, 'check', '--workspace', ws, '--requires', join(ws, 'plain.json')],
        floor: 'node -e 0',
        mayFail,
      },
      {
        label: `${name} check (paths, exec, git)`,
        args: [bin, 'check', '--workspace', ws, '--requires', join(ws, 'git.json')],
        floor: 'node + git rev-parse',
        mayFail,
      },
      // no target (a worker starts once per host): its modules loaded, then refused for want of a
      // token (exit 2; PREFLIGHT_TOKEN is taken out of every case's environment)
      {
        label: `${name} worker (loaded, refused)`,
        args: [bin, 'worker', '--coordinator', 'http://127.0.0.1:1'],
        mayFail,
        status: 2,
      },
    )
  }
  return list
}

export interface StartupFigure {
  label: string
  medianMs: number
  floor?: string
  ratio?: number
}

export function measureStartup(rounds = Number(process.env.BENCH_STARTUP_ROUNDS ?? 40)): StartupFigure[] {
  const bins: [string, string][] = [['preflight', join(ROOT, 'bin/preflight.js')]]
  for (const pair of (process.env.BENCH_STARTUP_BINS ?? '').split(',').filter(Boolean)) {
    const [name, path] = pair.split('=')
    if (name && path) bins.push([name, path])
  }
  const ws = workspace()
  const { PREFLIGHT_TOKEN: _, ...env } = process.env
  try {
    const list = cases(ws, bins)
    const times = list.map(() => [] as number[])
    for (let round = -1; round < rounds; round++) {
      for (let k = 0; k < list.length; k++) {
        const i = (k + Math.max(round, 0)) % list.length
        const c = list[i] as Case
        const started = performance.now()
        const run = spawnSync(process.execPath, c.args, { stdio: 'ignore', env })
        const ms = performance.now() - started
        if (run.status !== (c.status ?? 0) && !c.mayFail) throw new Error(`${c.label} exited ${run.status}`)
        // round -1 warms the page cache and is not counted
        if (round >= 0) times[i]?.push(ms)
      }
    }
    const medians = new Map(list.map((c, i) => [c.label, median(times[i] ?? [])]))
    return list.map((c) => {
      const medianMs = medians.get(c.label) ?? Number.NaN
      if (!c.floor) return { label: c.label, medianMs }
      return { label: c.label, medianMs, floor: c.floor, ratio: medianMs / (medians.get(c.floor) ?? 1) }
    })
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
}

export function printStartup(figures: StartupFigure[]): void {
  for (const f of figures) {
    const ratio = f.ratio === undefined ? '' : `  ${f.ratio.toFixed(2)}x ${f.floor}`
    console.log(`${f.label.padEnd(44)} median ${f.medianMs.toFixed(1).padStart(6)} ms${ratio}`)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printStartup(measureStartup())
