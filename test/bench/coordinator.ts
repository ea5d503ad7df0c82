// `npm run bench:coordinator`: the coordinator on a fresh PostgreSQL database over real HTTP.
// The coordinator is the built CLI (`npm run build` first) in its own process.
// 1. full dispatch cycles with 4 concurrent workers; 2. the operators' queries on 1,000,000
// generated requirement results, with their plans; 3. the claim with 100,000 queued dispatches of
// uniform and of mixed priority, and the metadata filter, with their plans; 4. GET /v1/dispatches on
// 1,000,000 dispatches, with its plans; 5. /readyz and GET /v1/reports while 40 scrapers hit /metrics
// on those dispatches.
// Prints figures, asserts nothing; the database
// is dropped afterwards. BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres);
// the other switches (cycles only, CPU windows, profiling) are in docs/benchmarks.md.
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import type { Role } from '../../src/contract/index.js'
import { connectPostgres } from '../../src/coordinator/db/client.js'
import { runBaselineComparison } from './coordinator-baseline.js'
import { runClaimBench } from './coordinator-claims.js'
import { sampleCpu } from './coordinator-cpu.js'
import { caller, runCycleBench } from './coordinator-cycles.js'
import { generateHistory, REPORTS, REQUIREMENTS } from './coordinator-data.js'
import { generateDispatches, runListBench } from './coordinator-dispatches.js'
import { runQueryBench } from './coordinator-queries.js'
import { runScrapeBench } from './coordinator-scrapers.js'
import { spawnCoordinator } from './coordinator-server.js'
import { runStepAccounting } from './coordinator-steps.js'

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CYCLE_SECONDS = Number(process.env.BENCH_CYCLE_SECONDS ?? 20)
const CYCLE_ROUNDS = Number(process.env.BENCH_CYCLE_ROUNDS ?? 5)
const STEP_CYCLES = Number(process.env.BENCH_STEP_CYCLES ?? 200)
const QUERY_ROUNDS = Number(process.env.BENCH_QUERY_ROUNDS ?? 200)
const CLAIM_ROUNDS = Number(process.env.BENCH_CLAIM_ROUNDS ?? 500)
const LIST_ROUNDS = Number(process.env.BENCH_LIST_ROUNDS ?? 200)
const SCRAPERS = Number(process.env.BENCH_SCRAPERS ?? 40)
const SCRAPE_SECONDS = Number(process.env.BENCH_SCRAPE_SECONDS ?? 10)

const tokens: Record<Role, string> = {
  orchestrator: `bench-orchestrator-${randomBytes(8).toString('hex')}`,
  worker: `bench-worker-${randomBytes(8).toString('hex')}`,
  operator: `bench-operator-${randomBytes(8).toString('hex')}`,
  admin: `bench-admin-${randomBytes(8).toString('hex')}`,
}

async function main() {
  const { values: args } = parseArgs({ options: { baseline: { type: 'string' }, gate: { type: 'string' } } })
  if (args.baseline !== undefined) {
    const gate = args.gate === undefined ? undefined : Number(args.gate)
    if (gate !== undefined && !(gate > 0)) throw new Error(`--gate ${args.gate}: not a ratio above 0`)
    const held = await runBaselineComparison({
      ref: args.baseline,
      gate,
      pairs: Number(process.env.BENCH_BASELINE_PAIRS ?? 6),
      seconds: Number(process.env.BENCH_BASELINE_SECONDS ?? 6),
      rounds: 4,
      server: SERVER,
      tokens,
    })
    if (!held) process.exitCode = 1
    return
  }
  if (args.gate !== undefined) throw new Error('--gate needs --baseline REF')
  const name = `preflight_bench_${randomBytes(4).toString('hex')}`
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(SERVER)
  url.pathname = `/${name}`
  const db = connectPostgres(url.toString(), { poolSize: 10 })
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} })
  const cleanup: (() => Promise<unknown>)[] = [
    () => admin.unsafe(`drop database if exists ${name} with (force)`).then(() => admin.end()),
    () => db.close(),
    () => sql.end(),
  ]
  try {
    const bootstrap = Object.entries(tokens).map(([role, token]) => `${role}:${token}`)
    const server = await spawnCoordinator(url.toString(), bootstrap.join(','))
    cleanup.push(() => server.stop())
    console.log(`# preflight coordinator benchmark (node ${process.version}, database ${name})`)
    // BENCH_STEP_CYCLES=0: without the table of what each request writes.
    if (STEP_CYCLES > 0)
      await runStepAccounting({
        call: caller(server.url, tokens),
        sql,
        cycles: STEP_CYCLES,
        cpu: () => sampleCpu(server.pid, name),
      })
    if (CYCLE_SECONDS > 0)
      await runCycleBench({
        url: server.url,
        pid: server.pid,
        database: name,
        tokens,
        seconds: CYCLE_SECONDS,
        rounds: CYCLE_ROUNDS,
        workers: 4,
      })
    // BENCH_QUERY_ROUNDS=0: without the 1,000,000 results and their queries.
    if (QUERY_ROUNDS > 0) {
      const started = performance.now()
      await generateHistory(sql)
      const [count] = await sql`select count(*)::int as n from requirement_results`
      console.log(
        `\n# generated ${REPORTS} reports × ${REQUIREMENTS} = ${REPORTS * REQUIREMENTS} results (${count?.n} not met, with a row) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
      await runQueryBench({ url: server.url, token: tokens.operator, sql, orm: db.orm, rounds: QUERY_ROUNDS })
    }
    // BENCH_CLAIM_ROUNDS=0: without the 100,000 queued dispatches and their claims.
    if (CLAIM_ROUNDS > 0)
      await runClaimBench({ url: server.url, token: tokens.worker, sql, orm: db.orm, rounds: CLAIM_ROUNDS })
    // BENCH_LIST_ROUNDS=0 and BENCH_SCRAPERS=0: without the 1,000,000 dispatches.
    if (LIST_ROUNDS <= 0 && SCRAPERS <= 0) return
    const topUp = performance.now()
    const dispatches = await generateDispatches(sql)
    console.log(
      `\n# generated dispatches up to ${dispatches} in ${((performance.now() - topUp) / 1000).toFixed(1)} s`,
    )
    if (LIST_ROUNDS > 0)
      await runListBench({ url: server.url, token: tokens.operator, sql, rounds: LIST_ROUNDS })
    if (SCRAPERS <= 0) return
    await runScrapeBench({
      url: server.url,
      operatorToken: tokens.operator,
      scrapers: SCRAPERS,
      seconds: SCRAPE_SECONDS,
    })
  } finally {
    for (const release of cleanup.reverse()) await release().catch((err) => console.error(String(err)))
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
