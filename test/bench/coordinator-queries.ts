// The operators' queries over real HTTP on the generated history: latency per page of 100, and the
// plan PostgreSQL picks for each (EXPLAIN ANALYZE), to show which index serves it.
import type { Sql } from 'postgres'
import type { Orm } from '../../src/coordinator/db/client.js'
import { type ReportPageQuery, reportsQuery } from '../../src/coordinator/db/reports.js'
import { type SummaryFilters, summaryQuery } from '../../src/coordinator/db/summary.js'
import { LAST_WEEK, SUBAGENTS } from './coordinator-data.js'
import { formatMs, percentile } from './coordinator-stats.js'

export interface QueryCase {
  name: string
  path: (round: number) => string
  explain: ReportPageQuery | SummaryFilters
  kind: 'reports' | 'summary'
}

const subagent = (round: number) => `subagent-${(round * 37) % SUBAGENTS}`

export const queryCases: QueryCase[] = [
  {
    name: 'reports ?outcome=unmet&subagent=…',
    path: (r) => `/v1/reports?outcome=unmet&subagent=${subagent(r)}&limit=100`,
    explain: { outcome: 'unmet', subagent: 'subagent-7', limit: 100 },
    kind: 'reports',
  },
  {
    name: 'reports ?subagent=…',
    path: (r) => `/v1/reports?subagent=${subagent(r)}&limit=100`,
    explain: { subagent: 'subagent-7', limit: 100 },
    kind: 'reports',
  },
  {
    name: 'reports (no filter)',
    path: () => '/v1/reports?limit=100',
    explain: { limit: 100 },
    kind: 'reports',
  },
  {
    name: 'reports ?kind=exec&reason=not-found',
    path: () => '/v1/reports?kind=exec&reason=not-found&limit=100',
    explain: { kind: 'exec', reason: 'not-found', limit: 100 },
    kind: 'reports',
  },
  {
    name: 'reports ?kind=git',
    path: () => '/v1/reports?kind=git&limit=100',
    explain: { kind: 'git', limit: 100 },
    kind: 'reports',
  },
  {
    name: 'reports ?reason=timeout (a rarer code)',
    path: () => '/v1/reports?reason=timeout&limit=100',
    explain: { reason: 'timeout', limit: 100 },
    kind: 'reports',
  },
  {
    name: 'reports ?kind=exec&reason=not-found&worker=…',
    path: (r) => `/v1/reports?kind=exec&reason=not-found&worker=worker-${r % 16}&limit=100`,
    explain: { kind: 'exec', reason: 'not-found', worker: 'worker-3', limit: 100 },
    kind: 'reports',
  },
  {
    name: 'reports ?worker=…&since=…',
    path: (r) => `/v1/reports?worker=worker-${r % 16}&since=2026-01-20T00:00:00Z&limit=100`,
    explain: { worker: 'worker-3', since: '2026-01-20T00:00:00Z', limit: 100 },
    kind: 'reports',
  },
  {
    name: 'summary ?subagent=…',
    path: (r) => `/v1/reports/summary?subagent=${subagent(r)}&limit=100`,
    explain: { subagent: 'subagent-7', limit: 100 },
    kind: 'summary',
  },
  {
    name: 'summary ?subagent=…&since=… (last 7 days)',
    path: (r) => `/v1/reports/summary?subagent=${subagent(r)}&since=${LAST_WEEK}&limit=100`,
    explain: { subagent: 'subagent-7', since: LAST_WEEK, limit: 100 },
    kind: 'summary',
  },
  {
    name: 'summary ?since=… (last 7 days, first page of 100)',
    path: () => `/v1/reports/summary?since=${LAST_WEEK}&limit=100`,
    explain: { since: LAST_WEEK, limit: 100 },
    kind: 'summary',
  },
  {
    name: 'summary (first page of 100 of all 1,600 rows)',
    path: () => '/v1/reports/summary?limit=100',
    explain: { limit: 100 },
    kind: 'summary',
  },
]

export async function timeQuery(url: string, token: string, c: QueryCase, rounds: number) {
  const ms: number[] = []
  let items = 0
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    const res = await fetch(`${url}${c.path(round)}`, { headers: { authorization: `Bearer ${token}` } })
    const body = (await res.json()) as { items?: unknown[] }
    ms.push(performance.now() - started)
    if (res.status !== 200) throw new Error(`${c.name}: HTTP ${res.status} ${JSON.stringify(body)}`)
    items += body.items?.length ?? 0
  }
  return {
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: Math.max(...ms),
    itemsPerPage: items / rounds,
  }
}

const built = (orm: Orm, c: QueryCase) =>
  (c.kind === 'reports' ? reportsQuery(orm, c.explain) : summaryQuery(orm, c.explain)).toSQL()

// The same SQL straight on the database: what the query costs without HTTP and Node in the way.
export async function timeSql(sql: Sql, orm: Orm, c: QueryCase, rounds: number) {
  const { sql: text, params } = built(orm, c)
  const ms: number[] = []
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    await sql.unsafe(text, params as never[])
    ms.push(performance.now() - started)
  }
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) }
}

export async function explain(sql: Sql, orm: Orm, c: QueryCase): Promise<string> {
  const { sql: text, params } = built(orm, c)
  const plan = await sql.unsafe(`explain (analyze, buffers, costs off) ${text}`, params as never[])
  return plan.map((row) => `    ${row['QUERY PLAN']}`).join('\n')
}

export async function runQueryBench(opts: {
  url: string
  token: string
  sql: Sql
  orm: Orm
  rounds: number
}) {
  console.log(`\n## operators' queries, ${opts.rounds} requests each, page of 100`)
  console.log(
    `  ${''.padEnd(48)} ${'HTTP p50 / p99 / max'.padEnd(30)} ${'SQL alone p50 / p99'.padEnd(22)} items`,
  )
  for (const c of queryCases) {
    const t = await timeQuery(opts.url, opts.token, c, opts.rounds)
    const d = await timeSql(opts.sql, opts.orm, c, opts.rounds)
    const http = `${formatMs(t.p50)} / ${formatMs(t.p99)} / ${formatMs(t.max)}`
    const alone = `${formatMs(d.p50)} / ${formatMs(d.p99)}`
    console.log(`  ${c.name.padEnd(48)} ${http}   ${alone}   ${t.itemsPerPage.toFixed(0)}`)
  }
  console.log('\n## EXPLAIN (ANALYZE, BUFFERS)')
  for (const c of queryCases) console.log(`\n  ${c.name}\n${await explain(opts.sql, opts.orm, c)}`)
}
