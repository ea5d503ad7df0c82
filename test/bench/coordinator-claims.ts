// The claim with 100,000 queued dispatches: uniform priority (the order before priorities: every
// dispatch 0, oldest first), mixed priorities (-10…10), and mixed with 5 % of them past the aging bound
// (the aged walk answers every measured claim), each timed over HTTP (POST /v1/worker/claim against
// the real coordinator) and alone in SQL (the same prepared statement, through the coordinator's own
// database layer), with its plan (EXPLAIN ANALYZE in a rolled-back transaction, on the fresh queue).
// The cases take turns, BENCH_CLAIM_TURNS times (default 2), so the machine's moods fall on all of
// them. Then the listing's metadata filter on those dispatches, with its plans.
import { randomBytes } from 'node:crypto'
import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { ParameterOrJSON, Sql } from 'postgres'
import { clientOf, type Orm, rows } from '../../src/coordinator/db/client.js'
import { dispatchesQuery } from '../../src/coordinator/db/dispatch-list.js'
import { claimNext, claimStatement, PRIORITY_AGING_MS } from '../../src/coordinator/db/leases.js'
import { formatMs, percentile } from './coordinator-stats.js'

export const QUEUED = 100_000
const SUBAGENT = 'claim-bench'
const TURNS = Number(process.env.BENCH_CLAIM_TURNS ?? 2)

interface ClaimCase {
  name: string
  // the priority of the i-th dispatch, and how old it is (SQL over i)
  priority: string
  age: string
}

const cases: ClaimCase[] = [
  { name: 'uniform priority (0)', priority: '0', age: `(${QUEUED} - i) * interval '1 millisecond'` },
  {
    name: 'mixed priority (-10…10)',
    priority: '(abs(hashint4(i)) % 21) - 10',
    age: `(${QUEUED} - i) * interval '1 millisecond'`,
  },
  {
    name: 'mixed, 5 % aged',
    priority: '(abs(hashint4(i)) % 21) - 10',
    age: `case when i % 20 = 0 then interval '1 hour' + (${QUEUED} - i) * interval '1 millisecond'
               else (${QUEUED} - i) * interval '1 millisecond' end`,
  },
]

// Replaces the queue with QUEUED dispatches of this case (each with metadata: a task of its own, one of
// ten teams).
async function fill(sql: Sql, c: ClaimCase): Promise<void> {
  await sql.unsafe(`delete from dispatches where subagent_name = '${SUBAGENT}'`)
  await sql.unsafe(`
    insert into subagent_versions (name, version, hash, definition)
    values ('${SUBAGENT}', 1, repeat('0', 64), '{"name":"${SUBAGENT}","agent":{"command":["true"]}}')
    on conflict do nothing`)
  await sql.unsafe(`
    insert into dispatches (id, subagent_name, subagent_version, workspace, status, created_at, updated_at,
      priority, metadata)
    select gen_random_uuid(), '${SUBAGENT}', 1, '{"repo":"bench"}', 'queued', now() - ${c.age}, now(),
      ${c.priority}, jsonb_build_object('task', 'T-' || i, 'team', 'team-' || (i % 10))
    from generate_series(1, ${QUEUED}) i`)
  await sql.unsafe('vacuum analyze dispatches')
}

const claimBody = JSON.stringify({ workerId: 'bench-claimer', waitMs: 0 })

async function timeHttp(url: string, token: string, rounds: number) {
  const ms: number[] = []
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    const res = await fetch(`${url}/v1/worker/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: claimBody,
    })
    await res.arrayBuffer()
    ms.push(performance.now() - started)
    if (res.status !== 200) throw new Error(`claim: HTTP ${res.status}`)
  }
  return ms
}

const worker = { workerId: 'bench-sql' }

// Through the coordinator's database layer, prepared as the coordinator runs it.
async function timeSql(orm: Orm, rounds: number) {
  const ms: number[] = []
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    const got = await claimNext(orm, worker, 60_000, PRIORITY_AGING_MS)
    ms.push(performance.now() - started)
    if (!got) throw new Error('the claim took nothing')
  }
  return ms
}

// The claim's own text and values, as claimNext() sends them (drizzle would number each use of a value
// anew).
const claimQuery = () =>
  claimStatement(worker, 60_000, PRIORITY_AGING_MS, randomBytes(24).toString('base64url'))

// EXPLAIN ANALYZE runs the statement: in a transaction that is rolled back, so nothing is claimed. Through
// the coordinator's postgres.js client (its jsonb parameters passed as the text they are).
async function explain(orm: Orm, query: { text: string; values: unknown[] }): Promise<string> {
  const client = clientOf(orm)
  if (!client) throw new Error('the claim benchmark runs on PostgreSQL')
  let plan = ''
  await client
    .begin(async (tx) => {
      const lines = await tx.unsafe(
        `explain (analyze, buffers, costs off) ${query.text}`,
        query.values as ParameterOrJSON<never>[],
      )
      plan = lines.map((row) => `    ${row['QUERY PLAN']}`).join('\n')
      throw new Error('rollback')
    })
    .catch((err: Error) => {
      if (err.message !== 'rollback') throw err
    })
  return plan
}

const asQuery = (statement: SQL) => {
  const { sql: text, params } = new PgDialect().sqlToQuery(statement)
  return { text, values: params }
}

const summary = (ms: number[]) =>
  `${formatMs(percentile(ms, 50))} / ${formatMs(percentile(ms, 99))} / ${formatMs(Math.max(...ms))}`

export async function runClaimBench(opts: {
  url: string
  token: string
  sql: Sql
  orm: Orm
  rounds: number
}) {
  console.log(
    `\n## POST /v1/worker/claim with ${QUEUED.toLocaleString('en')} queued dispatches, ${opts.rounds} claims each`,
  )
  console.log(`  ${''.padEnd(26)} ${'HTTP p50 / p99 / max'.padEnd(30)} SQL alone p50 / p99 / max`)
  const plans: string[] = []
  for (let turn = 0; turn < TURNS; turn++)
    for (const c of cases) {
      await fill(opts.sql, c)
      if (turn === 0) plans.push(`\n  ${c.name}\n${await explain(opts.orm, claimQuery())}`)
      // not counted: the coordinator's first claims (code and plans warm up)
      await timeHttp(opts.url, opts.token, 10)
      const http = await timeHttp(opts.url, opts.token, opts.rounds)
      const alone = await timeSql(opts.orm, opts.rounds)
      console.log(`  ${c.name.padEnd(26)} ${summary(http)}   ${summary(alone)}`)
    }
  console.log('\n## EXPLAIN (ANALYZE, BUFFERS) of the claim at 100,000 queued (fresh queue)')
  for (const plan of plans) console.log(plan)

  console.log(`\n## GET /v1/dispatches?metadata.… on ${QUEUED.toLocaleString('en')} dispatches with metadata`)
  for (const [name, metadata] of [
    ['metadata.task=T-4242 (one dispatch)', { task: 'T-4242' }],
    ['metadata.team=team-3 (10 %)', { team: 'team-3' }],
    ['metadata.team=team-2&metadata.task=T-4242', { team: 'team-2', task: 'T-4242' }],
  ] as const) {
    const page = dispatchesQuery({ metadata, limit: 50 })
    const ms: number[] = []
    let found = 0
    for (let round = 0; round < opts.rounds; round++) {
      const started = performance.now()
      found = (await rows(opts.orm, page)).length
      ms.push(performance.now() - started)
    }
    console.log(
      `\n  ${name}: ${found} rows, SQL alone p50 / p99 / max ${summary(ms)}\n${await explain(opts.orm, asQuery(page))}`,
    )
  }
  await opts.sql.unsafe(`delete from dispatches where subagent_name = '${SUBAGENT}'`)
}
