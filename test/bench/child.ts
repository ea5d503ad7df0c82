// Benchmark measurements in a fresh process: `child.ts <set>:<runner>[,<set>:<runner>...] <rounds> <warm>`.
// Several pairs are timed round-robin, so that a change in machine load hits each of them alike and their
// ratio stays meaningful on a shared machine. Prints JSON on stdout.
import { SETS, type SetName } from './reference.js'
import { RUNNERS, type RunnerName, type RunStats } from './runners.js'
import { ensureBenchWorkspace } from './workspace.js'

const [pairsArg = '', roundsArg = '11', warmArg = '1'] = process.argv.slice(2)
const pairs = pairsArg.split(',').map((pair) => {
  const [set, runner] = pair.split(':')
  const requires = SETS[set as SetName]
  const run = RUNNERS[runner as RunnerName]
  if (!requires || !run)
    throw new Error(`unknown pair "${pair}": <${Object.keys(SETS)}>:<${Object.keys(RUNNERS)}>`)
  return { key: pair, requires, run, times: [] as number[], stats: { entries: 0, met: 0 } as RunStats }
})

const workspace = ensureBenchWorkspace()
// warm-up: the page cache, the JIT and (for preflight) the git binary are warm before timing
for (let i = 0; i < Number(warmArg); i++) for (const p of pairs) p.stats = await p.run(workspace, p.requires)
for (let round = 0; round < Number(roundsArg); round++) {
  for (const p of pairs) {
    const started = performance.now()
    p.stats = await p.run(workspace, p.requires)
    p.times.push(performance.now() - started)
  }
}
const results = pairs.map(({ key, times, stats }) => ({ key, times, ...stats }))
process.stdout.write(`${JSON.stringify({ results, maxRssKb: process.resourceUsage().maxRSS })}\n`)
