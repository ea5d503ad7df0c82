// `npm run bench:check`: the check benchmark of issue 2 on a synthetic ~100k-entry workspace.
// Each measurement runs in a fresh process (child.ts) so one does not warm or bloat another.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SETS, type SetName } from './reference.js'
import type { RunnerName } from './runners.js'
import { ensureBenchWorkspace } from './workspace.js'

const ROOT = join(import.meta.dirname, '../..')
const RUNS = 11
// baseline (a) reads the whole tree once per pattern (~1M entries a run): fewer runs keep the bench to minutes
const RUNS_A = Number(process.env.BENCH_RUNS_A ?? 3)

interface Measured {
  times: number[]
  entries: number
  met: number
  maxRssKb: number
}

function measure(runner: RunnerName, set: SetName, runs: number, warm = 1): Measured {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'child.ts'), runner, set, String(runs), String(warm)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24 },
  )
  return JSON.parse(out) as Measured
}

// Peak RSS of the real `preflight check` process on the reference set.
function checkRss(workspace: string): number {
  const dir = mkdtempSync(join(tmpdir(), 'preflight-bench-'))
  try {
    const file = join(dir, 'requires.json')
    writeFileSync(file, JSON.stringify(SETS.reference))
    const hook =
      'data:text/javascript,process.on("exit",()=>process.stderr.write("maxrss="+process.resourceUsage().maxRSS+"\\n"))'
    const bin = join(ROOT, 'bin/preflight.js')
    const args = [
      '--import',
      hook,
      bin,
      'check',
      '--workspace',
      workspace,
      '--requires',
      file,
      '--format',
      'json',
    ]
    let stderr = ''
    try {
      execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] })
    } catch (err) {
      // exit 1 is expected: the reference set has unmet requirements by design
      stderr = String((err as { stderr?: string }).stderr ?? '')
    }
    return Number(/maxrss=(\d+)/.exec(stderr)?.[1] ?? Number.NaN)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? Number.NaN
const ms = (x: number) => `${x.toFixed(1)} ms`

function row(label: string, m: Measured): string {
  const t = `median ${ms(median(m.times))}  min ${ms(Math.min(...m.times))}  max ${ms(Math.max(...m.times))}`
  return `${label.padEnd(34)} ${t.padEnd(48)} entries ${String(m.entries).padStart(7)}  met ${m.met}  rss ${(m.maxRssKb / 1024).toFixed(0)} MB  (${m.times.length} runs)`
}

function verdict(ok: boolean, text: string): string {
  return `${ok ? 'PASS' : 'FAIL'}  ${text}`
}

function main(): void {
  const started = performance.now()
  const workspace = ensureBenchWorkspace()
  console.log(
    `workspace ${workspace} (generated ${(performance.now() - started) / 1000 > 2 ? 'now' : 'earlier, reused'})`,
  )
  const full = measure('preflight', 'reference', RUNS)
  const paths = measure('preflight', 'paths-only', RUNS)
  const noMiss = measure('preflight', 'no-miss', RUNS)
  const tiny = measure('tinyglobby', 'paths-only', RUNS)
  const naive = measure('readdirRecursive', 'paths-only', RUNS_A, 0)
  const rss = checkRss(workspace)

  console.log(row('preflight, reference set', full))
  console.log(row('preflight, reference paths only', paths))
  console.log(row('preflight, set without no-match **', noMiss))
  console.log(row('(b) tinyglobby defaults, paths', tiny))
  console.log(row('(a) readdir recursive + picomatch', naive))
  console.log(`peak RSS of \`preflight check\` on the reference set: ${(rss / 1024).toFixed(1)} MB`)
  const ratioA = median(naive.times) / median(paths.times)
  const ratioB = median(tiny.times) / median(paths.times)
  console.log(`ratios (median, paths vs paths): (a) ${ratioA.toFixed(1)}x  (b) ${ratioB.toFixed(1)}x`)
  console.log(
    `ratios against the whole reference set (exec and git included): (a) ${(median(naive.times) / median(full.times)).toFixed(1)}x  (b) ${(median(tiny.times) / median(full.times)).toFixed(1)}x`,
  )
  console.log(
    verdict(full.entries <= 45_000, `directory entries read for the reference set ${full.entries} <= 45,000`),
  )
  console.log(verdict(ratioA >= 50, `>= 50x faster than (a): ${ratioA.toFixed(1)}x`))
  console.log(verdict(ratioB >= 4, `>= 4x faster than (b): ${ratioB.toFixed(1)}x`))
  console.log(
    verdict(
      median(noMiss.times) < 10,
      `set without no-match recursive globs under 10 ms warm: ${ms(median(noMiss.times))}`,
    ),
  )
  console.log(
    verdict(rss / 1024 <= 120, `peak RSS of preflight check <= 120 MB: ${(rss / 1024).toFixed(1)} MB`),
  )
  console.log(`bench took ${((performance.now() - started) / 1000).toFixed(0)} s`)
}

main()
