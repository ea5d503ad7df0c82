// GET /v1/dispatches (and the endings `watch` follows) on 1,000,000 dispatches: the history is topped
// up with ended dispatches spread over statuses, subagents, workers and reasons, then each filter is
// timed over real HTTP and alone in SQL, and its plan printed (EXPLAIN ANALYZE) to show the index it
// walks. Target: p99 ≤ 50 ms for a page of 50.
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Sql } from 'postgres'
import { encodeCursor } from '../../src/coordinator/db/cursor.js'
import {
  type DispatchPageQuery,
  dispatchesQuery,
  type EndingsPageQuery,
  endingsQuery,
} from '../../src/coordinator/db/dispatch-list.js'
import { formatMs, percentile } from './coordinator-stats.js'

export const DISPATCHES = 1_000_000

// i → status, a fixed pseudo-random spread: succeeded 70%, failed 8%, preflight_failed 8%,
// setup_failed 5%, cancelled 5%, expired 3%, running 1% (no lease: nothing sweeps or claims it).
const SPREAD = '((hashint4(i)::bigint + 2147483648) % 100)'
const STATUS = `case when ${SPREAD} < 70 then 'succeeded' when ${SPREAD} < 78 then 'failed'
  when ${SPREAD} < 86 then 'preflight_failed' when ${SPREAD} < 91 then 'setup_failed'
  when ${SPREAD} < 96 then 'cancelled' when ${SPREAD} < 99 then 'expired' else 'running' end`
const SETUP_REASONS = `array['setup-exit', 'setup-exit', 'clone-failed', 'ref-not-found', 'setup-timeout']`
const COMPLETION = `case s.status
  when 'succeeded' then '{"status":"succeeded","exitCode":0}'::jsonb
  when 'failed' then '{"status":"failed","exitCode":1}'::jsonb
  when 'setup_failed' then jsonb_build_object('status', 'setup_failed', 'exitCode', 1,
    'reason', (${SETUP_REASONS})[i % 5 + 1], 'detail', repeat('npm ERR! code ELIFECYCLE' || chr(10), 40)) end`
// A preflight_failed dispatch's reason: not-found 50%, no-match 30%, not-a-worktree 15%, timeout 5%.
const K = '((hashtext(id::text)::bigint & 1023) % 20)'
const PREFLIGHT_REASON = `case when ${K} < 10 then 'not-found' when ${K} < 16 then 'no-match'
  when ${K} < 19 then 'not-a-worktree' else 'timeout' end`

// Tops the history up to DISPATCHES dispatches (2 s apart from 2026-01-01), each with the worker of its
// claim, when it ended and why; the reports benchmark's dispatches get a worker and an end too.
export async function generateDispatches(sql: Sql): Promise<number> {
  await sql.unsafe(`
    insert into subagent_versions (name, version, hash, definition)
    select 'subagent-' || s, 1, repeat('0', 64), jsonb_build_object('name', 'subagent-' || s)
    from generate_series(0, 199) s on conflict do nothing`)
  const [have] = await sql`select count(*)::int as n from dispatches`
  const from = (have?.n ?? 0) + 1
  await sql.unsafe(`
    update dispatches set worker_id = 'worker-' || (hashtext(created_at::text)::bigint & 15),
      ended_at = updated_at where ended_at is null and status <> 'running'`)
  await sql.unsafe(`
    insert into dispatches (id, subagent_name, subagent_version, workspace, status, attempt, created_at,
      updated_at, worker_id, ended_at, completion)
    select md5('x' || i)::uuid, 'subagent-' || (i % 200), 1, '{"repo":"bench"}', s.status, 1, at,
      at + interval '1 minute', 'worker-' || (i % 16),
      case when s.status <> 'running' then at + interval '1 minute' end, ${COMPLETION}
    from generate_series(${from}, ${DISPATCHES}) i,
      lateral (select ${STATUS} as status, timestamptz '2026-01-01' + i * interval '2 seconds' as at) s`)
  await sql.unsafe(`
    insert into dispatch_reasons (dispatch_id, reason, status, created_at, subagent_name, worker_id)
    select id, completion ->> 'reason', status, created_at, subagent_name, worker_id from dispatches
    where status = 'setup_failed'
    on conflict do nothing`)
  await sql.unsafe(`
    insert into dispatch_reasons (dispatch_id, reason, status, created_at, subagent_name, worker_id)
    select id, ${PREFLIGHT_REASON}, status, created_at, subagent_name, worker_id
    from dispatches where status = 'preflight_failed' on conflict do nothing`)
  // a third of the expired ones: a worker posted a fault
  await sql.unsafe(`
    with faulted as (
      select id, status, created_at, ended_at, subagent_name, worker_id from dispatches
      where status = 'expired' and (hashtext(id::text)::bigint & 3) = 0
    ), ev as (
      update dispatches d set events = d.events || jsonb_build_array(jsonb_build_object('step', 'fault',
        'at', to_char(f.ended_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'attempt', 1,
        'detail', '{"message":"baseline: git write-tree exited 128"}'::jsonb))
      from faulted f where d.id = f.id
    )
    insert into dispatch_reasons (dispatch_id, reason, status, created_at, subagent_name, worker_id)
    select id, 'fault', status, created_at, subagent_name, worker_id from faulted on conflict do nothing`)
  await sql.unsafe('vacuum analyze dispatches')
  await sql.unsafe('vacuum analyze dispatch_reasons')
  const [now] = await sql`select count(*)::int as n from dispatches`
  return now?.n ?? 0
}

interface ListCase {
  name: string
  path: (round: number) => string
  explain: DispatchPageQuery | (EndingsPageQuery & { endings: true })
}

const subagent = (round: number) => `subagent-${(round * 37) % 200}`
// A cursor deep inside the history: what any later page of a walk costs.
const deep = encodeCursor(['2026-01-12T00:00:00.000000Z', '80000000-0000-4000-8000-000000000000'])

export const listCases: ListCase[] = [
  { name: '(no filter)', path: () => '', explain: { limit: 50 } },
  { name: '?limit=500', path: () => '?limit=500', explain: { limit: 500 } },
  { name: '?cursor=… (deep page)', path: () => `?cursor=${deep}`, explain: { limit: 50, cursor: deep } },
  { name: '?status=failed', path: () => '?status=failed', explain: { status: ['failed'], limit: 50 } },
  {
    name: '?status=expired&status=setup_failed',
    path: () => '?status=expired&status=setup_failed',
    explain: { status: ['expired', 'setup_failed'], limit: 50 },
  },
  {
    name: '?status=running (1%)',
    path: () => '?status=running',
    explain: { status: ['running'], limit: 50 },
  },
  {
    name: '?subagent=…',
    path: (r) => `?subagent=${subagent(r)}`,
    explain: { subagent: 'subagent-7', limit: 50 },
  },
  {
    name: '?subagent=…&status=setup_failed',
    path: (r) => `?subagent=${subagent(r)}&status=setup_failed`,
    explain: { subagent: 'subagent-7', status: ['setup_failed'], limit: 50 },
  },
  { name: '?worker=…', path: (r) => `?worker=worker-${r % 16}`, explain: { worker: 'worker-3', limit: 50 } },
  {
    name: '?reason=setup-timeout',
    path: () => '?reason=setup-timeout',
    explain: { reason: 'setup-timeout', limit: 50 },
  },
  { name: '?reason=fault', path: () => '?reason=fault', explain: { reason: 'fault', limit: 50 } },
  {
    name: '?reason=fault&worker=…',
    path: (r) => `?reason=fault&worker=worker-${r % 16}`,
    explain: { reason: 'fault', worker: 'worker-3', limit: 50 },
  },
  {
    name: '?reason=not-found&status=failed (never both)',
    path: () => '?reason=not-found&status=failed',
    explain: { reason: 'not-found', status: ['failed'], limit: 50 },
  },
  {
    name: '?reason=not-found&subagent=…',
    path: (r) => `?reason=not-found&subagent=${subagent(r)}`,
    explain: { reason: 'not-found', subagent: 'subagent-7', limit: 50 },
  },
  {
    name: '?since=…&until=… (one day)',
    path: () => '?since=2026-01-10T00:00:00Z&until=2026-01-11T00:00:00Z',
    explain: { since: '2026-01-10T00:00:00Z', until: '2026-01-11T00:00:00Z', limit: 50 },
  },
  {
    name: '?status=failed&since=…&until=…',
    path: () => '?status=failed&since=2026-01-10T00:00:00Z&until=2026-01-11T00:00:00Z',
    explain: { status: ['failed'], since: '2026-01-10T00:00:00Z', until: '2026-01-11T00:00:00Z', limit: 50 },
  },
  {
    name: 'endings ?since=…&status=failed…',
    path: () =>
      '/endings?since=2026-01-10T00:00:00Z&status=failed&status=setup_failed&status=preflight_failed&status=expired',
    explain: {
      endings: true,
      since: '2026-01-10T00:00:00Z',
      status: ['failed', 'setup_failed', 'preflight_failed', 'expired'],
      limit: 50,
      settleMs: 1000,
    },
  },
]

const dialect = new PgDialect()
const built = (c: ListCase) =>
  dialect.sqlToQuery('endings' in c.explain ? endingsQuery(c.explain) : dispatchesQuery(c.explain))

async function timeHttp(url: string, token: string, c: ListCase, rounds: number) {
  const ms: number[] = []
  let items = 0
  for (let round = 0; round < rounds; round++) {
    const path = c.path(round)
    const started = performance.now()
    const res = await fetch(`${url}/v1/dispatches${path}`, { headers: { authorization: `Bearer ${token}` } })
    const body = (await res.json()) as { items?: unknown[] }
    ms.push(performance.now() - started)
    if (res.status !== 200) throw new Error(`${c.name}: HTTP ${res.status} ${JSON.stringify(body)}`)
    items += body.items?.length ?? 0
  }
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms), items: items / rounds }
}

async function timeSql(sql: Sql, c: ListCase, rounds: number) {
  const { sql: text, params } = built(c)
  const ms: number[] = []
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    // prepared, as the coordinator runs them
    await sql.unsafe(text, params as never[], { prepare: true })
    ms.push(performance.now() - started)
  }
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) }
}

export async function explainList(sql: Sql, c: ListCase): Promise<string> {
  const { sql: text, params } = built(c)
  const plan = await sql.unsafe(`explain (analyze, buffers, costs off) ${text}`, params as never[])
  return plan.map((row) => `    ${row['QUERY PLAN']}`).join('\n')
}

export async function runListBench(opts: { url: string; token: string; sql: Sql; rounds: number }) {
  console.log(
    `\n## GET /v1/dispatches on ${DISPATCHES.toLocaleString('en')} dispatches, ${opts.rounds} requests each`,
  )
  console.log(
    `  ${''.padEnd(40)} ${'HTTP p50 / p99 / max'.padEnd(30)} ${'SQL alone p50 / p99'.padEnd(22)} items`,
  )
  // Not counted: the coordinator's first requests (its code and plans warm up) and a cold cache.
  for (const c of listCases) await timeHttp(opts.url, opts.token, c, 5)
  for (const c of listCases) {
    const t = await timeHttp(opts.url, opts.token, c, opts.rounds)
    const d = await timeSql(opts.sql, c, opts.rounds)
    const http = `${formatMs(t.p50)} / ${formatMs(t.p99)} / ${formatMs(t.max)}`
    console.log(
      `  ${c.name.padEnd(40)} ${http}   ${formatMs(d.p50)} / ${formatMs(d.p99)}   ${t.items.toFixed(0)}`,
    )
  }
  console.log('\n## EXPLAIN (ANALYZE, BUFFERS) of the listing')
  for (const c of listCases) console.log(`\n  ${c.name}\n${await explainList(opts.sql, c)}`)
}
