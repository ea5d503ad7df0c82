// Full dispatch cycles over real HTTP: each of N concurrent workers loops create → claim → report →
// complete for a fixed time; prints cycles per second and p50/p99 of each step.
import { Agent, type RequestOptions, request } from 'node:http'
import { listRequirements, type Role, type SubagentDefinition } from '../../src/contract/index.js'
import { formatCpu, measureWindows, sampleCpu, scaleCpu } from './coordinator-cpu.js'
import { formatMs, percentile } from './coordinator-stats.js'

export const definition: SubagentDefinition = {
  name: 'bench-agent',
  description: 'benchmark subagent',
  agent: { command: ['true'] },
  contextRequires: {
    paths: ['package.json', 'src/**/*.ts', 'dist/index.js', '.github/workflows/*.yml'],
    exec: ['node', 'git', 'pnpm'],
    git: { worktree: true },
  },
}

const results = listRequirements(definition.contextRequires).map((r) => ({
  ...r,
  status: 'met' as const,
  observed: { match: 'x' },
  durationMs: 1,
}))

// A met report of every requirement, as a worker sends it.
export function cycleReport(workerId: string) {
  const now = new Date().toISOString()
  return {
    outcome: 'met',
    declared: true,
    results,
    startedAt: now,
    finishedAt: now,
    worker: { id: workerId },
  }
}

type Step = 'create' | 'claim' | 'report' | 'complete'

// BENCH_CYCLE_NEXT=0: every cycle claims with a request of its own, as workers before `next` did.
export const CYCLE_NEXT = process.env.BENCH_CYCLE_NEXT !== '0'

interface CycleOptions {
  url: string
  // The coordinator's pid and the benchmark database, whose CPU time is measured.
  pid: number
  database: string
  tokens: Record<Role, string>
  seconds: number
  workers: number
  // The measured time is cut into this many windows, each with its own CPU figures.
  rounds: number
  // unmeasured cycles first (2000)
  warmUpMs?: number
  // the workers ask for their next dispatch with each completion (default), where the build takes it
  next?: boolean
}

// Registers the definition, warms up for 2 s (warmUpMs) (JIT, pools, plan caches: not counted), then runs
// `rounds` windows of cycles with CPU samples around each.
export async function measureCycles(opts: CycleOptions) {
  const call = caller(opts.url, opts.tokens)
  await call('orchestrator', 'POST', '/v1/subagents', definition)
  const timings: Record<Step, number[]> = { create: [], claim: [], report: [], complete: [] }
  const workers: Workers = { count: opts.workers, next: opts.next ?? CYCLE_NEXT, held: new Map() }
  // A busy fleet's queue holds a few dispatches: a completion that asks for the next one finds one.
  for (let i = 0; i < 2 * opts.workers; i++)
    await call('orchestrator', 'POST', '/v1/dispatches', {
      subagent: definition.name,
      workspace: { repo: 'bench' },
    })
  await runWorkers(call, workers, performance.now() + (opts.warmUpMs ?? 2000), {
    create: [],
    claim: [],
    report: [],
    complete: [],
  })
  const sample = () => sampleCpu(opts.pid, opts.database)
  const windowMs = (opts.seconds * 1000) / opts.rounds
  const cycles = await measureWindows(opts.rounds, sample, () =>
    runWorkers(call, workers, performance.now() + windowMs, timings),
  )
  return { cycles, timings, sample, windowMs, next: workers.next }
}

export async function runCycleBench(opts: CycleOptions): Promise<void> {
  const { cycles, timings, sample, windowMs, next } = await measureCycles(opts)
  const floor = await measureWindows(3, sample, () => healthzRate(opts.url, opts.workers, 1000))
  console.log(
    `\n## full cycles, ${opts.workers} concurrent HTTP workers, ${opts.rounds} windows of ${(windowMs / 1000).toFixed(1)} s`,
  )
  const requests = Object.values(timings).reduce((n, ms) => n + ms.length, 0)
  console.log(
    `  ${next ? 'the next dispatch claimed by each completion (next)' : 'a claim request each cycle'}: ${(requests / timings.complete.length).toFixed(2)} requests a cycle`,
  )
  console.log(`  cycles: ${cycles.units}   cycles/s: ${cycles.rate.toFixed(0)} (windows ${cycles.rates})`)
  console.log(`  CPU per cycle, least disturbed window: ${formatCpu(cycles.best, 1)}`)
  console.log(`  CPU per cycle, median window:          ${formatCpu(cycles.median, 1)}`)
  // A cycle is four requests: the floor of a cycle is four /healthz requests.
  const floorCycle = scaleCpu(floor.best, 4)
  console.log(
    `  floor: GET /healthz (no database, ${opts.workers} concurrent clients): ${floor.rate.toFixed(0)} requests/s = ${(floor.rate / 4).toFixed(0)} cycles/s`,
  )
  console.log(`  floor CPU per 4 requests, least disturbed window: ${formatCpu(floorCycle, 1)}`)
  console.log(
    `  vs floor: cycles/s ${((100 * cycles.rate) / (floor.rate / 4)).toFixed(0)}% of it; coordinator CPU per cycle ${(cycles.best.coordinator / floorCycle.coordinator).toFixed(1)}× it`,
  )
  for (const step of Object.keys(timings) as Step[]) {
    const ms = timings[step]
    console.log(
      `  ${step.padEnd(9)} p50 ${formatMs(percentile(ms, 50))}   p99 ${formatMs(percentile(ms, 99))}`,
    )
  }
}

export type Call = ReturnType<typeof caller>

// What this machine does at best: the cheapest route, same concurrency; a cycle is four requests.
export async function healthzRate(url: string, clients: number, ms: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  const { hostname, port } = new URL(url)
  const until = performance.now() + ms
  let requests = 0
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        await send(agent, { hostname, port, method: 'GET', path: '/healthz' }, undefined)
        requests++
      }
    }),
  )
  return requests
}

// How the workers end a dispatch: asking for the next one in the completion (`next`, where the
// coordinator takes it), or a completion and then a claim of their own, as before `next` was there.
export interface Workers {
  count: number
  next: boolean
  // the claim each worker holds between windows: the one its last completion was answered with
  held: Map<number, Claimed>
}

// biome-ignore lint/suspicious/noExplicitAny: the benchmark reads a few known fields of each answer
type Claimed = any

async function runWorkers(call: Call, workers: Workers, until: number, timings: Record<Step, number[]>) {
  const counts = await Promise.all(
    Array.from({ length: workers.count }, (_, w) => workerLoop(call, w, workers, until, timings)),
  )
  return counts.reduce((a, b) => a + b, 0)
}

async function workerLoop(
  call: Call,
  w: number,
  workers: Workers,
  until: number,
  timings: Record<Step, number[]>,
) {
  const workerId = `bench-worker-${w}`
  let cycles = 0
  const timed = async <T>(step: Step, work: () => Promise<T>) => {
    const started = performance.now()
    const value = await work()
    timings[step].push(performance.now() - started)
    return value
  }
  while (performance.now() < until) {
    await timed('create', () =>
      call('orchestrator', 'POST', '/v1/dispatches', {
        subagent: definition.name,
        workspace: { repo: 'bench' },
      }),
    )
    const claimed =
      workers.held.get(w) ??
      (await timed('claim', () => call('worker', 'POST', '/v1/worker/claim', { workerId, waitMs: 1000 })))
    workers.held.delete(w)
    if (!claimed) continue
    const { id, attempt } = claimed.dispatch
    const fence = { attempt, leaseToken: claimed.lease.token }
    const report = cycleReport(workerId)
    await timed('report', () => call('worker', 'PUT', `/v1/dispatches/${id}/preflight`, { ...fence, report }))
    const done = await timed('complete', () =>
      complete(call, id, { ...fence, exitCode: 0, durationMs: 1 }, workers, workerId),
    )
    if (done.next) workers.held.set(w, done.next)
    cycles++
  }
  return cycles
}

// A build from before `next` refuses the field (400): the run goes on without it.
async function complete(call: Call, id: string, body: object, workers: Workers, workerId: string) {
  const path = `/v1/dispatches/${id}/complete`
  if (!workers.next) return call('worker', 'POST', path, body)
  try {
    return await call('worker', 'POST', path, { ...body, next: { workerId } })
  } catch (err) {
    if (!/HTTP 400/.test(String(err))) throw err
    workers.next = false
    return call('worker', 'POST', path, body)
  }
}

// JSON over node:http with keep-alive: fetch (undici) costs the client several times more CPU per
// request, which on a 2-core machine is taken from the coordinator. 204 answers undefined,
// anything but 2xx throws.
export function caller(url: string, tokens: Record<Role, string>) {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  const { hostname, port } = new URL(url)
  // biome-ignore lint/suspicious/noExplicitAny: the benchmark reads a few known fields of each answer
  return async (role: Role, method: string, path: string, body: unknown): Promise<any> => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string | number> = { authorization: `Bearer ${tokens[role]}` }
    if (payload !== undefined) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = Buffer.byteLength(payload)
    }
    const { status, text } = await send(agent, { hostname, port, method, path, headers }, payload)
    if (status === 204) return undefined
    if (status >= 300) throw new Error(`${method} ${path}: HTTP ${status} ${text}`)
    return JSON.parse(text)
  }
}

function send(agent: Agent, options: RequestOptions, payload: string | undefined) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request({ ...options, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}
