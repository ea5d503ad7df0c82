// Hand-made report histories for the reports tests: rows written straight into the tables so that
// created_at, workers and outcomes are exactly what each test needs. Runs on PostgreSQL and PGlite.
import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { type CheckResult, outcomeOf } from '../../src/contract/index.js'
import { type Orm, one } from '../../src/coordinator/db/client.js'
import { rollUp } from '../../src/coordinator/db/preflight.js'

export interface SeedReport {
  subagent?: string
  worker?: string
  at: string // ISO, microseconds allowed
  results: Partial<CheckResult>[]
}

const defaults: CheckResult = {
  kind: 'exec',
  requirement: 'node',
  status: 'met',
  observed: {},
  durationMs: 1,
}

// ::text first: a timestamptz parameter would pass through a JS Date and lose the microseconds.
const at = (iso: string) => sql`${iso}::text::timestamptz`
const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`

// Inserts a subagent version, a dispatch and its report as the schema the database has come to stores
// one: since migration 0016 with its kinds and a requirement_results row for each result that is not met
// (each with its report's worker), else with a row for every result; counted in requirement_rollups
// where that table exists.
export async function seedReport(db: Orm, seed: SeedReport): Promise<{ dispatchId: string }> {
  const subagent = seed.subagent ?? 'frontend-fixer'
  const results = seed.results.map((r) => ({ ...defaults, ...r }) as CheckResult)
  const outcome = outcomeOf(results)
  const dispatchId = randomUUID()
  const report = { outcome, declared: results.length > 0, results, startedAt: seed.at, finishedAt: seed.at }
  const has = await one<{ rollups: boolean; workers: boolean; kinds: boolean }>(
    db,
    sql`SELECT to_regclass('requirement_rollups') IS NOT NULL AS rollups,
          EXISTS (SELECT FROM information_schema.columns
                  WHERE table_name = 'requirement_results' AND column_name = 'worker_id') AS workers,
          EXISTS (SELECT FROM information_schema.columns
                  WHERE table_name = 'preflight_reports' AND column_name = 'kinds') AS kinds`,
  )
  await db.execute(sql`insert into subagent_versions (name, version, hash, definition)
    values (${subagent}, 1, ${'0'.repeat(64)}, ${json({ name: subagent })}) on conflict do nothing`)
  await db.execute(sql`insert into dispatches (id, subagent_name, subagent_version, workspace, status, attempt)
    values (${dispatchId}, ${subagent}, 1, ${json({ repo: 'x' })}, 'running', 1)`)
  const row = await one<{ id: string | number }>(
    db,
    sql`insert into preflight_reports (dispatch_id, attempt, subagent_name, subagent_version, worker_id,
        outcome, decision, declared, report, created_at)
      values (${dispatchId}, 1, ${subagent}, 1, ${seed.worker ?? 'w-1'}, ${outcome},
        ${outcome === 'met' ? 'proceed' : 'abort'}, ${report.declared}, ${json(report)}, ${at(seed.at)})
      returning id`,
  )
  if (has?.kinds)
    await db.execute(sql`update preflight_reports
      set kinds = ${`{${[...new Set(results.map((r) => r.kind))].sort().join(',')}}`}::text[] where id = ${row?.id}`)
  for (const [position, r] of results.entries()) {
    if (has?.kinds && r.status === 'met') continue
    await db.execute(sql`insert into requirement_results (report_id, position, subagent_name, kind,
        requirement, status, reason, observed, duration_ms, created_at)
      values (${row?.id}, ${position}, ${subagent}, ${r.kind}, ${r.requirement}, ${r.status},
        ${r.reason ?? null}, ${json(r.observed)}, ${r.durationMs}, ${at(seed.at)})`)
  }
  if (has?.workers)
    await db.execute(sql`UPDATE requirement_results SET worker_id = ${seed.worker ?? 'w-1'}
      WHERE report_id = ${row?.id} AND reason IS NOT NULL`)
  if (has?.rollups)
    await db.execute(
      sql`WITH x AS (SELECT ${subagent}::text AS subagent_name, e ->> 'kind' AS kind, e ->> 'requirement' AS requirement,
                            e ->> 'status' AS status, ${at(seed.at)} AS created_at
                     FROM jsonb_array_elements(${json(results)}) AS e) ${sql.raw(rollUp)}`,
    )
  return { dispatchId }
}

export const met = (requirement = 'node', kind: CheckResult['kind'] = 'exec'): Partial<CheckResult> => ({
  kind,
  requirement,
  status: 'met',
  observed: { name: requirement, path: `/usr/bin/${requirement}` },
})

export const unmet = (requirement = 'pnpm', kind: CheckResult['kind'] = 'exec', reason = 'not-found') => ({
  kind,
  requirement,
  status: 'unmet' as const,
  reason,
  observed: { name: requirement, searched: ['/usr/bin', '/bin'] },
})

export const errored = (
  requirement = 'src/**/*.ts',
  kind: CheckResult['kind'] = 'paths',
  reason = 'timeout',
) => ({
  kind,
  requirement,
  status: 'error' as const,
  reason,
  observed: { entriesScanned: 1200 },
})
