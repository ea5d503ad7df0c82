// One benchmark measurement in a fresh process: `child.ts <runner> <set> <runs>` prints JSON on stdout.

import { SETS, type SetName } from './reference.js'
import { RUNNERS, type RunnerName } from './runners.js'
import { ensureBenchWorkspace } from './workspace.js'

const [runnerName, setName, runsArg] = process.argv.slice(2)
const runner = RUNNERS[runnerName as RunnerName]
const requires = SETS[setName as SetName]
if (!runner || !requires)
  throw new Error(`usage: child.ts <${Object.keys(RUNNERS)}> <${Object.keys(SETS)}> <runs>`)

const workspace = ensureBenchWorkspace()
// one warm-up run: the page cache, the JIT and (for preflight) the git binary are warm before timing
const warm = await runner(workspace, requires)
const times: number[] = []
for (let i = 0; i < Number(runsArg ?? 11); i++) {
  const started = performance.now()
  await runner(workspace, requires)
  times.push(performance.now() - started)
}
process.stdout.write(
  `${JSON.stringify({ times, entries: warm.entries, met: warm.met, maxRssKb: process.resourceUsage().maxRSS })}\n`,
)
