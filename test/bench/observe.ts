// `npm run bench:observe`: what --observe costs an agent. A real test suite — this project's own contract
// tests under vitest, by default — run as the worker runs an agent (runProcess), traced (strace, as
// --observe runs it) and not, taking turns (ABAB…) so that a machine that gets busier slows both alike.
// Prints each run's wall time, the medians, the ratio traced / untraced, and what the trace saw. The
// issue's target: at most 1.10. BENCH_OBSERVE_ROUNDS (5), BENCH_OBSERVE_COMMAND (a shell command line).
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Observation } from '../../worker/observe/observation.js'
import { findTracer } from '../../worker/observe/trace.js'
import { runProcess } from '../../worker/run/process.js'

const ROUNDS = Number(process.env.BENCH_OBSERVE_ROUNDS ?? 5)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const COMMAND =
  process.env.BENCH_OBSERVE_COMMAND ?? 'npx vitest run test/contract --reporter=dot --config vitest.config.ts'

const tracer = findTracer()
if (typeof tracer === 'string') {
  console.error(`bench:observe: ${tracer}`)
  process.exit(1)
}
const env = Object.fromEntries(
  Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
)
const argv = ['sh', '-c', COMMAND]

async function once(traced: boolean): Promise<{ ms: number; seen?: string }> {
  const start = (args: readonly string[], runEnv: Record<string, string>) =>
    runProcess(args, { cwd: ROOT, env: runEnv })
  const started = performance.now()
  if (!traced) {
    const run = await start(argv, env)
    if (run.exitCode !== 0) throw new Error(`the suite failed untraced:\n${run.tail}`)
    return { ms: performance.now() - started }
  }
  const observation = new Observation(tracer as Exclude<typeof tracer, string>)
  const run = await observation.run(ROOT, argv, env, undefined, (a, e) => start(a, e))
  const ms = performance.now() - started
  if (run.exitCode !== 0) throw new Error(`the suite failed traced:\n${run.tail}`)
  const { observed } = observation.record(undefined, argv)
  return {
    ms,
    seen: `${observed?.exec.length} programs, ${observed?.paths.length} files not there${observed?.cut ? ' (cut)' : ''}`,
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

console.log(`# bench:observe — ${COMMAND}`)
console.log(`# ${ROUNDS} rounds, untraced and traced in turn; load average ${loadavg()[0]?.toFixed(1)}`)
await once(false) // warm the caches both will use
const plain: number[] = []
const traced: number[] = []
let seen = ''
for (let i = 0; i < ROUNDS; i++) {
  const [first, second] = i % 2 === 0 ? [false, true] : [true, false]
  for (const t of [first, second]) {
    const r = await once(t)
    ;(t ? traced : plain).push(r.ms)
    if (r.seen) seen = r.seen
    console.log(`round ${i + 1} ${t ? 'traced  ' : 'untraced'} ${(r.ms / 1000).toFixed(2)} s`)
  }
}
const ratio = median(traced) / median(plain)
console.log(`| | median wall time |\n| --- | --- |`)
console.log(`| untraced | ${(median(plain) / 1000).toFixed(2)} s |`)
console.log(`| traced (--observe) | ${(median(traced) / 1000).toFixed(2)} s |`)
console.log(
  `traced / untraced: ${ratio.toFixed(3)} (target ≤ 1.10); the trace saw ${seen}; load average ${loadavg()[0]?.toFixed(1)}`,
)
