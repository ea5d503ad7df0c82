// One benchmark measurement in a fresh process: `child.ts <runner> <set> <runs>` prints JSON on stdout.

import { SETS, type SetName } from './reference.js'
import { RUNNERS, type RunnerName } from './runners.js'
import { ensureBenchWorkspace } from './workspace.js'

const [runnerName, setName, runsArg, warmArg] = process.argv.slice(2)
const runner = RUNNERS[runnerName as RunnerName]
const requires = SETS[setName as SetName]
if (!runner || !requires)
  throw new Error(`usage: child.ts <${Object.keys(RUNNERS)}> <${Object.keys(SETS)}> <runs>`)

const workspace = ensureBenchWorkspace()
// warm-up runs: the page cache, the JIT and (for preflight) the git binary are warm before timing
let stats = { entries: 0, met: 0 }
for (let i = 0; i < Number(warmArg ?? 1); i++) stats = await runner(workspace, requires)
const times: number[] = []
for (let i = 0; i < Number(runsArg ?? 11); i++) {
  const started = performance.now()
  stats = await runner(workspace, requires)
  times.push(performance.now() - started)
}
const maxRssKb = process.resourceUsage().maxRSS
process.stdout.write(`${JSON.stringify({ times, entries: stats.entries, met: stats.met, maxRssKb })}\n`)
