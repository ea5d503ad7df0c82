// requirement_rollups, the summary's rows: counted on by the statement that stores a report, they equal a
// recount of the reports' judged results row by row — with reports stored concurrently, incomplete ones among them
// — and the summary read from them equals the one aggregated from the results. And the worker a result
// with a reason carries.
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CheckResult, ClaimResponse, SubagentDefinition } from '../../../src/contract/index.js'
import { outcomeOf } from '../../../src/contract/index.js'
import { rows } from '../../../src/coordinator/db/client.js'
import { claimNext } from '../../../src/coordinator/db/leases.js'
import { migrate, readMigrations } from '../../../src/coordinator/db/migrate.js'
import { registerSubagent } from '../../../src/coordinator/db/subagents.js'
import { summarise } from '../../../src/coordinator/db/summary.js'
import { createDispatch } from '../../../src/coordinator/dispatch/dispatches.js'
import { storeReport } from '../../../src/coordinator/dispatch/preflight.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { definition, reportFor, workspace } from '../../support/fixtures.js'

let t: TestDatabase
beforeAll(async () => {
  t = await createTestDatabase()
})
afterAll(() => t?.drop())

// a recount of the results each report keeps (the rows, before migration 0016 kept only those not met)
const recountOf = (results: ReturnType<typeof sql>) => sql`SELECT subagent_name, kind, requirement,
    count(*)::int AS checks, (count(*) FILTER (WHERE status = 'met'))::int AS met,
    (count(*) FILTER (WHERE status = 'unmet'))::int AS unmet, (count(*) FILTER (WHERE status = 'error'))::int AS error,
    max(created_at) FILTER (WHERE status = 'met') AS last_met_at
  FROM (${results}) r GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
const RECOUNT =
  recountOf(sql`SELECT p.subagent_name, e ->> 'kind' AS kind, e ->> 'requirement' AS requirement,
    e ->> 'status' AS status, p.created_at
  FROM preflight_reports p, jsonb_array_elements(coalesce(p.judged, p.report -> 'results')) AS e`)
const RECOUNT_ROWS = recountOf(
  sql`SELECT subagent_name, kind, requirement, status, created_at FROM requirement_results`,
)
const ROLLED_UP = sql`SELECT subagent_name, kind, requirement, checks::int, met::int, unmet::int, error::int, last_met_at
  FROM requirement_rollups ORDER BY 1, 2, 3`

const STATUSES: CheckResult['status'][] = ['met', 'met', 'unmet', 'error']
const REASONS = { unmet: 'not-found', error: 'timeout' }
// a deterministic spread of statuses, so a run can be repeated
const pick = (i: number, j: number) => STATUSES[(i * 7 + j * 3 + ((i * j) % 5)) % STATUSES.length] ?? 'met'

const defs: SubagentDefinition[] = [
  definition('web'),
  { ...definition('api'), contextRequires: { exec: ['git', 'node'], git: { history: true } } },
]

// Dispatches of each definition, claimed, then their reports stored `parallel` at a time; every fifth
// report leaves out its last result (the coordinator adds it as an error: report-incomplete).
async function storeMany(count: number, parallel: number, statusOf = pick) {
  const db = t.db.orm
  const claims: { claim: ClaimResponse; def: SubagentDefinition }[] = []
  for (let i = 0; i < count; i++) {
    const def = defs[i % defs.length] as SubagentDefinition
    await registerSubagent(db, def)
    await createDispatch(db, { subagent: def.name, workspace }, { maxAttempts: 3, notify: false })
    const claim = await claimNext(db, { workerId: 'w1' }, 60_000)
    if (!claim) throw new Error('nothing to claim')
    claims.push({ claim, def })
  }
  const store = async ({ claim, def }: { claim: ClaimResponse; def: SubagentDefinition }, i: number) => {
    const report = reportFor(def)
    report.results = report.results.map((r, j) => {
      const status = statusOf(i, j)
      return status === 'met' ? { ...r, status } : { ...r, status, reason: REASONS[status] }
    })
    if (i % 5 === 0) report.results.pop()
    report.outcome = outcomeOf(report.results)
    const fence = { attempt: claim.dispatch.attempt, leaseToken: claim.lease.token }
    await storeReport(db, claim.dispatch.id, { ...fence, report })
  }
  for (let at = 0; at < claims.length; at += parallel) {
    await Promise.all(claims.slice(at, at + parallel).map((c, k) => store(c, at + k)))
  }
}

describe('requirement_rollups', () => {
  it('equals a recount of the results, row by row, after reports stored concurrently', async () => {
    await storeMany(120, 12)
    const recount = await rows(t.db.orm, RECOUNT)
    expect(recount.length).toBe(8)
    expect(await rows(t.db.orm, ROLLED_UP)).toEqual(recount)
  })

  // GET /v1/reports?reason=…&worker=… walks requirement_results_worker_reason
  it("stores the report's worker on each result with a reason, and on no other", async () => {
    const [found] = await rows<{ reasons: number; wrong: number }>(
      t.db.orm,
      sql`SELECT (count(*) FILTER (WHERE r.reason IS NOT NULL))::int AS reasons,
            (count(*) FILTER (WHERE r.worker_id IS DISTINCT FROM
              CASE WHEN r.reason IS NOT NULL THEN p.worker_id END))::int AS wrong
          FROM requirement_results r JOIN preflight_reports p ON p.id = r.report_id`,
    )
    expect(found?.reasons).toBeGreaterThan(100)
    expect(found?.wrong).toBe(0)
  })

  it('gives the summary that aggregating the results gives, drift included', async () => {
    // the latest of the reports stored in parallel may be met for every requirement: no drift is then
    // left to compare; one unmet report of each definition, stored after them all, leaves some
    await storeMany(defs.length, 1, () => 'unmet')
    const raw = await summarise(t.db.orm, { limit: 100, since: '2000-01-01T00:00:00.000Z' })
    const rolled = await summarise(t.db.orm, { limit: 100 })
    expect(rolled.items).toEqual(raw.items)
    expect(rolled.items.some((item) => item.firstUnmetAfterMetAt !== null)).toBe(true)
    // and page by page
    const first = await summarise(t.db.orm, { limit: 4 })
    const rest = await summarise(t.db.orm, { limit: 100, cursor: first.nextCursor ?? '' })
    expect([...first.items, ...rest.items]).toEqual(raw.items)
    // and with a window, a page ending inside a subagent's requirements
    const since = '2000-01-01T00:00:00.000Z'
    const head = await summarise(t.db.orm, { limit: 3, since })
    const tail = await summarise(t.db.orm, { limit: 100, since, cursor: head.nextCursor ?? '' })
    expect([...head.items, ...tail.items]).toEqual(raw.items)
  })

  it('is filled from the results already stored when a database migrates to it', async () => {
    const before = await createTestDatabase({ migrate: false })
    try {
      const all = readMigrations()
      const at = all.findIndex((m) => m.name.startsWith('0013_'))
      await migrate(before.db, all.slice(0, at))
      // 300 reports of one dispatch, one result each, a second apart, of three subagents and statuses
      await before.db.orm.execute(sql`WITH v AS (
          INSERT INTO subagent_versions (name, version, hash, definition) VALUES ('s', 1, ${'0'.repeat(64)}, '{}')
          RETURNING name, version
        ), d AS (
          INSERT INTO dispatches (id, subagent_name, subagent_version, workspace)
          SELECT gen_random_uuid(), name, version, '{}' FROM v
          RETURNING id
        ), r AS (
          INSERT INTO preflight_reports (dispatch_id, attempt, subagent_name, subagent_version, worker_id,
                                         outcome, decision, declared, report, created_at)
          SELECT d.id, n, 's' || (n % 3), 1, 'w', 'met', 'proceed', true, '{}', now() - make_interval(secs => n)
          FROM d, generate_series(1, 300) AS n RETURNING id, attempt AS n, subagent_name, created_at
        )
        INSERT INTO requirement_results
          (report_id, position, subagent_name, kind, requirement, status, observed, duration_ms, created_at)
        SELECT id, 0, subagent_name, 'exec', 'node', (ARRAY['met', 'unmet', 'error'])[1 + n % 5 % 3], '{}', 1,
               created_at
        FROM r`)
      await migrate(before.db, all.slice(0, at + 1))
      const recount = await rows(before.db.orm, RECOUNT_ROWS)
      expect(recount.length).toBe(3)
      expect(await rows(before.db.orm, ROLLED_UP)).toEqual(recount)
      // and the later migrations leave them as they are
      await migrate(before.db, all)
      expect(await rows(before.db.orm, ROLLED_UP)).toEqual(recount)
    } finally {
      await before.drop()
    }
  })
})
