// What each request of a dispatch cycle writes: N creates, then N claims, N reports and N completes,
// one at a time from one client, each batch measured on its own from PostgreSQL's counters —
// commits and rows of the benchmark database (pg_stat_database), rows per table (pg_stat_user_tables)
// and the WAL the cluster wrote (pg_current_wal_lsn). Figures are per request; the commits include
// the coordinator's own in the meantime (its lease sweep and outbox poll: a few hundredths a request),
// not this reader's.
import { execFile } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type postgres from 'postgres'
import { type CpuSample, type CpuSpent, cpuSince } from './coordinator-cpu.js'
import { type Call, cycleReport, definition } from './coordinator-cycles.js'

export interface Counters {
  commits: number
  inserted: number
  updated: number
  deleted: number
  wal: number
  lsn: string
  tables: Map<string, { ins: number; upd: number; del: number }>
}

// PostgreSQL flushes an idle backend's pending statistics within 10 s (PGSTAT_IDLE_INTERVAL).
export const SETTLE_MS = 11_000

type Claimed = { id: string; fence: { attempt: number; leaseToken: string } }

// The requests of a cycle, one at a time, as `workerId`.
function requests(call: Call, workerId: string) {
  return {
    create: () =>
      call('orchestrator', 'POST', '/v1/dispatches', {
        subagent: definition.name,
        workspace: { repo: 'bench' },
      }),
    claim: async (): Promise<Claimed> => {
      const { dispatch, lease } = await call('worker', 'POST', '/v1/worker/claim', { workerId, waitMs: 0 })
      return { id: dispatch.id, fence: { attempt: dispatch.attempt, leaseToken: lease.token } }
    },
    report: ({ id, fence }: Claimed) =>
      call('worker', 'PUT', `/v1/dispatches/${id}/preflight`, { ...fence, report: cycleReport(workerId) }),
    completion: ({ id, fence }: Claimed, next?: object) =>
      call('worker', 'POST', `/v1/dispatches/${id}/complete`, {
        ...fence,
        exitCode: 0,
        durationMs: 1,
        ...next,
      }),
  }
}

export async function runStepAccounting(opts: {
  call: Call
  sql: postgres.Sql
  cycles: number
  // the coordinator's CPU and its database's backends', read around each batch
  cpu: () => CpuSample
}) {
  const { call, sql, cycles } = opts
  const read = () => readCounters(sql)
  const { create, claim, report, completion } = requests(call, 'steps')
  const claimed: Claimed[] = []
  const claimOne = async () => {
    claimed.push(await claim())
  }
  const nth = (i: number) => {
    const one = claimed[i]
    if (!one) throw new Error(`claim ${i} got no dispatch`)
    return one
  }
  // the i-th request of each kind: the report and the complete of the i-th claimed dispatch
  const steps: [string, (i: number) => Promise<unknown>][] = [
    ['create', create],
    ['claim', () => claimOne()],
    ['report', (i) => report(nth(i))],
    ['complete', (i) => completion(nth(i))],
  ]
  await call('orchestrator', 'POST', '/v1/subagents', definition)
  const rows: string[] = []
  const dumps: string[] = []
  const batch = async (step: string, request: (i: number) => Promise<unknown>) => {
    await sleep(SETTLE_MS)
    const before = await read()
    for (let i = 0; i < cycles; i++) await request(i)
    await sleep(SETTLE_MS)
    // the reader's first statement committed after it read the counters
    const after = await read()
    const d = diffCounters(after, before, 1)
    rows.push(formatRow(step, d, cycles))
    if (process.env.BENCH_WALDUMP) dumps.push(await walRecords(step, before.lsn, after.lsn, cycles))
  }
  for (const [step, request] of steps) await batch(step, request)
  // A completion that claims the next dispatch (`next`), where the build takes it: against a
  // completion and a claim above. Its dispatches are created, claimed and reported first, unmeasured,
  // and as many again queued for the completions to claim (one more of each for the first, which asks
  // whether the build takes `next`).
  const more = claimed.length
  for (let i = 0; i <= cycles; i++) await create().then(() => claimOne())
  for (let i = 0; i <= cycles; i++) await report(nth(more + i))
  for (let i = 0; i <= cycles; i++) await create()
  const takesNext = await completion(nth(more), { next: { workerId: 'steps' } }).then(
    (done) => done?.next !== undefined,
    () => false,
  )
  if (takesNext)
    await batch('complete with next', async (i) => {
      const done = await completion(nth(more + 1 + i), { next: { workerId: 'steps' } })
      if (!done?.next) throw new Error(`complete with next ${i} claimed nothing`)
    })
  console.log(`\n## what each request writes (${cycles} of each, one at a time, per request)`)
  console.log(
    '  | request | commits | rows inserted | updated | deleted | WAL | rows by table (ins/upd/del) |',
  )
  console.log('  | --- | --- | --- | --- | --- | --- | --- |')
  for (const row of rows) console.log(`  ${row}`)
  for (const dump of dumps) console.log(dump)
  await cpuPerRequest(opts, takesNext)
}

// The CPU of each kind of request, one at a time: three rounds of a batch of each kind back to back
// (no pause between batches: a coordinator idle for seconds answers its next requests slower), the
// least of the three per kind.
async function cpuPerRequest(opts: Parameters<typeof runStepAccounting>[0], takesNext: boolean) {
  const { call, cycles } = opts
  const least = new Map<string, CpuSpent>()
  const measure = async (kind: string, request: (i: number) => Promise<unknown>) => {
    const before = opts.cpu()
    for (let i = 0; i < cycles; i++) await request(i)
    const spent = cpuSince(before, opts.cpu())
    const was = least.get(kind)
    if (!was || spent.coordinator + spent.postgres < was.coordinator + was.postgres) least.set(kind, spent)
  }
  const { create, claim, report, completion } = requests(call, 'cpu')
  for (let round = 0; round < 3; round++) {
    await measure('GET /healthz (the floor)', () => call('orchestrator', 'GET', '/healthz', undefined))
    await measure('create', create)
    const held: Claimed[] = []
    const nth = (i: number) => held[i] as Claimed
    await measure('claim', async () => held.push(await claim()))
    await measure('report', (i) => report(nth(i)))
    await measure('complete', (i) => completion(nth(i)))
    if (!takesNext) continue
    held.length = 0
    for (let i = 0; i < cycles; i++) held.push(await create().then(claim))
    for (const h of held) await report(h)
    for (let i = 0; i < cycles; i++) await create()
    await measure('complete with next', (i) => completion(nth(i), { next: { workerId: 'cpu' } }))
  }
  console.log(
    `\n## CPU of each request, one at a time (${cycles} of each, the least of 3 rounds, ms per request)`,
  )
  console.log('  | request | coordinator | postgres backends |')
  console.log('  | --- | --- | --- |')
  for (const [kind, spent] of least)
    console.log(
      `  | ${kind} | ${(spent.coordinator / cycles).toFixed(3)} | ${(spent.postgres / cycles).toFixed(3)} |`,
    )
}

// BENCH_WALDUMP=<the cluster's pg_wal directory> (PG_WALDUMP: the program, else pg_waldump on PATH): the
// WAL of a batch by record type, per request — what each statement's heap and index writes and full
// page images cost. The cluster's WAL, so run it on a quiet server.
async function walRecords(step: string, from: string, to: string, n: number): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.env.PG_WALDUMP ?? 'pg_waldump',
    ['--stats=record', '-p', process.env.BENCH_WALDUMP as string, '-s', from, '-e', to],
    { maxBuffer: 16 * 1024 * 1024 },
  )
  // "Heap/INSERT   count (pct)   record size (pct)   FPI size (pct)   combined size (pct)"
  const lines = stdout
    .split('\n')
    .map((line) =>
      line
        .replace(/\(\s*[\d.]+\)/g, ' ')
        .trim()
        .split(/\s+/),
    )
    .filter((f) => f.length === 5 && /^[A-Za-z0-9]+\//.test(f[0] ?? '') && Number(f[1]) > 0)
    .map((f) => ({ type: f[0] as string, count: Number(f[1]), record: Number(f[2]), fpi: Number(f[3]) }))
    .sort((a, b) => b.record + b.fpi - (a.record + a.fpi))
  const per = (x: number) => (x / n).toFixed(2)
  return [
    `\n### WAL records of ${step}, per request (count, record bytes, full-page-image bytes)`,
    ...lines.map(
      (l) =>
        `  ${l.type.padEnd(28)} ${per(l.count).padStart(6)} ${per(l.record).padStart(9)} ${per(l.fpi).padStart(9)}`,
    ),
  ].join('\n')
}

export async function readCounters(sql: postgres.Sql): Promise<Counters> {
  // one statement, so one commit of this reader's
  const [db] = await sql`
    select d.xact_commit::float8 as commits, d.tup_inserted::float8 as inserted,
      d.tup_updated::float8 as updated, d.tup_deleted::float8 as deleted,
      pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 as wal, pg_current_wal_lsn()::text as lsn,
      (select coalesce(json_agg(json_build_array(relname, n_tup_ins, n_tup_upd, n_tup_del)), '[]')
         from pg_stat_user_tables) as tables
    from pg_stat_database d where d.datname = current_database()`
  const tables = new Map<string, { ins: number; upd: number; del: number }>()
  for (const [name, ins, upd, del] of (db?.tables ?? []) as [string, number, number, number][])
    tables.set(name, { ins, upd, del })
  return {
    commits: Number(db?.commits),
    inserted: Number(db?.inserted),
    updated: Number(db?.updated),
    deleted: Number(db?.deleted),
    wal: Number(db?.wal),
    lsn: String(db?.lsn),
    tables,
  }
}

// a − b; `readers`: commits of the reads themselves, taken off
export function diffCounters(a: Counters, b: Counters, readers = 0): Counters {
  const tables = new Map<string, { ins: number; upd: number; del: number }>()
  for (const [name, t] of a.tables) {
    const o = b.tables.get(name) ?? { ins: 0, upd: 0, del: 0 }
    tables.set(name, { ins: t.ins - o.ins, upd: t.upd - o.upd, del: t.del - o.del })
  }
  return {
    commits: a.commits - b.commits - readers,
    inserted: a.inserted - b.inserted,
    updated: a.updated - b.updated,
    deleted: a.deleted - b.deleted,
    wal: a.wal - b.wal,
    lsn: a.lsn,
    tables,
  }
}

function formatRow(step: string, d: Counters, n: number): string {
  const per = (x: number) => (x / n).toFixed(2)
  const tables = [...d.tables]
    .filter(([, t]) => Math.abs(t.ins) + Math.abs(t.upd) + Math.abs(t.del) >= n / 2)
    .map(([name, t]) => `${name} ${per(t.ins)}/${per(t.upd)}/${per(t.del)}`)
    .join(', ')
  return `| ${step} | ${per(d.commits)} | ${per(d.inserted)} | ${per(d.updated)} | ${per(d.deleted)} | ${(d.wal / n / 1024).toFixed(2)} kB | ${tables} |`
}
