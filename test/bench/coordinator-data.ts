// Generates the reports benchmark history in SQL: 200 subagents × 8 requirements, 125,000 reports
// over 30 days, 1,000,000 results (BENCH_RESULT_ROWS: 10,000,000 makes 1,250,000 reports over 300
// days); ~10% of reports unmet and ~2% error. Stored as the coordinator stores them: each report with
// its results and kinds, a requirement_results row for each result not met, and the summary's rows.
import type { Sql } from 'postgres'

export const SUBAGENTS = 200
export const REQUIREMENTS = 8 // per report, so REPORTS × REQUIREMENTS result rows
export const REPORTS = Math.round(Number(process.env.BENCH_RESULT_ROWS ?? 1_000_000) / REQUIREMENTS)

const KINDS = `array['paths','paths','paths','paths','exec','exec','exec','git']`
const NAMES = `array['package.json','src/**/*.ts','dist/index.js','.github/workflows/*.yml','node','git','pnpm','worktree']`
// i → report i's outcome: a fixed pseudo-random spread so every run measures the same data.
const SPREAD = '((hashint4(i)::bigint + 2147483648) % 100)'
const OUTCOME = `case when ${SPREAD} < 10 then 'unmet' when ${SPREAD} < 12 then 'error' else 'met' end`
const AT = `timestamptz '2026-01-01' + i * interval '20736 milliseconds'` // 125,000 × 20.736 s = 30 days
// the last week of the history, whatever its length
export const LAST_WEEK = new Date(
  Date.parse('2026-01-01T00:00:00Z') + REPORTS * 20_736 - 7 * 86_400_000,
).toISOString()

// Report i gets id ID_OFFSET + i, clear of the ids the cycle benchmark used before.
const ID_OFFSET = 10_000_000
// Result p of report i: the failing requirement of a failing report is p = i % 8, the others are met.
const STATUS = `case when ${OUTCOME} <> 'met' and p = i % ${REQUIREMENTS} then ${OUTCOME} else 'met' end`
const REASON = `case when ${STATUS} = 'unmet' then (case when p < 4 then 'no-match' when p < 7 then 'not-found'
  else 'not-a-worktree' end) when ${STATUS} = 'error' then 'timeout' end`
const OBSERVED = `case when ${STATUS} = 'met' then '{"match":"x"}'::jsonb else '{"entriesScanned":12}'::jsonb end`
const RESULT_JSON = `jsonb_build_object('kind', (${KINDS})[p + 1], 'requirement', (${NAMES})[p + 1],
  'status', ${STATUS}, 'observed', ${OBSERVED}, 'durationMs', 1.5)
  || coalesce(jsonb_build_object('reason', ${REASON}), '{}'::jsonb)`

export async function generateHistory(sql: Sql): Promise<void> {
  await sql.unsafe(`
    insert into subagent_versions (name, version, hash, definition)
    select 'subagent-' || s, 1, repeat('0', 64), jsonb_build_object('name', 'subagent-' || s)
    from generate_series(0, ${SUBAGENTS - 1}) s`)
  await sql.unsafe(`
    insert into dispatches (id, subagent_name, subagent_version, workspace, status, attempt, created_at, updated_at)
    select md5('d' || i)::uuid, 'subagent-' || (i % ${SUBAGENTS}), 1, '{"repo":"bench"}',
      case when ${OUTCOME} = 'met' then 'succeeded' else 'preflight_failed' end, 1, ${AT}, ${AT}
    from generate_series(1, ${REPORTS}) i`)
  await sql.unsafe(`
    insert into preflight_reports (id, dispatch_id, attempt, subagent_name, subagent_version, worker_id,
      outcome, decision, declared, kinds, report, created_at)
    overriding system value
    select ${ID_OFFSET} + i, md5('d' || i)::uuid, 1, 'subagent-' || (i % ${SUBAGENTS}), 1, 'worker-' || (i % 16),
      ${OUTCOME}, case when ${OUTCOME} = 'met' then 'proceed' else 'abort' end, true, '{exec,git,paths}',
      jsonb_build_object('outcome', ${OUTCOME}, 'declared', true, 'startedAt', ${AT}, 'finishedAt', ${AT},
        'results', (select jsonb_agg(${RESULT_JSON} order by p) from generate_series(0, ${REQUIREMENTS - 1}) p)),
      ${AT}
    from generate_series(1, ${REPORTS}) i`)
  await sql.unsafe(`
    insert into requirement_results (report_id, position, subagent_name, kind, requirement, status, reason,
      observed, duration_ms, created_at, worker_id)
    select ${ID_OFFSET} + i, p, 'subagent-' || (i % ${SUBAGENTS}), (${KINDS})[p + 1], (${NAMES})[p + 1],
      ${STATUS}, ${REASON}, ${OBSERVED}, 1.5, ${AT}, case when ${REASON} is not null then 'worker-' || (i % 16) end
    from generate_series(1, ${REPORTS}) i cross join generate_series(0, ${REQUIREMENTS - 1}) p
    where ${STATUS} <> 'met'`)
  await sql.unsafe(`
    insert into requirement_rollups
    select subagent_name, kind, requirement, count(*), count(*) filter (where status = 'met'),
      count(*) filter (where status = 'unmet'), count(*) filter (where status = 'error'),
      max(created_at) filter (where status = 'met')
    from (select 'subagent-' || (i % ${SUBAGENTS}) as subagent_name, (${KINDS})[p + 1] as kind,
            (${NAMES})[p + 1] as requirement, ${STATUS} as status, ${AT} as created_at
          from generate_series(1, ${REPORTS}) i cross join generate_series(0, ${REQUIREMENTS - 1}) p) r
    group by subagent_name, kind, requirement`)
  await sql.unsafe('vacuum analyze')
  // the generation's dirty pages written now, not by the checkpointer while the queries are timed (it
  // put 20 ms stalls into the p99 of sub-millisecond plans); a role without the right skips it
  await sql.unsafe('checkpoint').catch((err: Error) => console.log(`# no checkpoint: ${err.message}`))
}
