// `npm run bench:observe`: what --observe costs an agent. A real test suite — this project's own contract
// tests under vitest, by default — run as the worker runs an agent (runProcess), untraced and under each
// tracer this machine has (preflight-trace, the one --observe picks, and strace), taking turns (ABCABC…)
// so that a machine that gets busier slows them alike. Prints each run's wall time, the medians, each
// tracer's ratio to the untraced run (of the medians, and the median of each round's), and what its
// trace saw. The target: at most 1.10.
// BENCH_OBSERVE_ROUNDS (5), BENCH_OBSERVE_COMMAND (a shell command line).
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Observation } from '../../worker/observe/observation.js'
import { findTracer, type Tracer } from '../../worker/observe/trace.js'
import { runProcess } from '../../worker/run/process.js'

const ROUNDS = Number(process.env.BENCH_OBSERVE_ROUNDS ?? 5)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const COMMAND =
  process.env.BENCH_OBSERVE_COMMAND ?? 'npx vitest run test/contract --reporter=dot --config vitest.config.ts'

const tracers = (['seccomp', 'strace'] as const)
  .map((kind) => findTracer([kind]))
  .filter((found): found is Tracer => typeof found === 'object')
if (tracers.length === 0) {
  console.error(`bench:observe: ${findTracer()}`)
  process.exit(1)
}
const env = Object.fromEntries(
  Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
)
const argv = ['sh', '-c', COMMAND]

async function once(tracer: Tracer | undefined): Promise<{ ms: number; seen?: string }> {
  const start = (args: readonly string[], runEnv: Record<string, string>) =>
    runProcess(args, { cwd: ROOT, env: runEnv })
  const started = performance.now()
  if (!tracer) {
    const run = await start(argv, env)
    if (run.exitCode !== 0) throw new Error(`the suite failed untraced:\n${run.tail}`)
    return { ms: performance.now() - started }
  }
  const observation = new Observation(tracer)
  const run = await observation.run(ROOT, argv, env, undefined, (a, e) => start(a, e))
  const ms = performance.now() - started
  if (run.exitCode !== 0) throw new Error(`the suite failed traced by ${tracer.kind}:\n${run.tail}`)
  const { observed } = observation.record(undefined, argv)
  return {
    ms,
    seen: `${observed?.exec.length} programs, ${observed?.paths.length} files not there${observed?.cut ? ' (cut)' : ''}`,
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const NAMES = { seccomp: 'preflight-trace', strace: 'strace' }
const arms = [undefined, ...tracers].map((tracer) => ({
  tracer,
  name: tracer ? NAMES[tracer.kind] : 'untraced',
  ms: [] as number[],
  seen: '',
}))

console.log(`# bench:observe — ${COMMAND}`)
console.log(
  `# ${ROUNDS} rounds, ${arms.map((arm) => arm.name).join(', ')} in turn; load average ${loadavg()[0]?.toFixed(1)}`,
)
await once(undefined) // warm the caches all will use
for (let i = 0; i < ROUNDS; i++) {
  // each round starts with the next arm: none is always first after an idle moment
  for (let j = 0; j < arms.length; j++) {
    const arm = arms[(i + j) % arms.length] as (typeof arms)[number]
    const r = await once(arm.tracer)
    arm.ms.push(r.ms)
    if (r.seen) arm.seen = r.seen
    console.log(`round ${i + 1} ${arm.name.padEnd(15)} ${(r.ms / 1000).toFixed(2)} s`)
  }
}
const plain = arms[0]?.ms ?? []
// a round's ratio is taken against the untraced run of the same round: a machine that drifts between
// rounds moves both
const paired = (ms: number[]) => median(ms.map((m, i) => m / (plain[i] ?? m)))
console.log(
  '| run | median wall time | / untraced (medians) | / untraced (round by round) | what the trace saw |',
)
console.log('| --- | --- | --- | --- | --- |')
for (const arm of arms)
  console.log(
    `| ${arm.name} | ${(median(arm.ms) / 1000).toFixed(2)} s | ${(median(arm.ms) / median(plain)).toFixed(3)} | ${paired(arm.ms).toFixed(3)} | ${arm.seen} |`,
  )
console.log(
  `target: ≤ 1.10 for the tracer --observe picks (${arms[1]?.name}); load average ${loadavg()[0]?.toFixed(1)}`,
)
