import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectPostgres, rows } from '../../../src/coordinator/db/client.js'
import { type DispatchPageQuery, listDispatches } from '../../../src/coordinator/db/dispatch-list.js'
import { MigrationMismatch, migrate, readMigrations } from '../../../src/coordinator/db/migrate.js'
import { listReports } from '../../../src/coordinator/db/reports.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { met, seedReport, unmet } from '../../support/reports-fixtures.js'

describe('migrate', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false })
  })
  afterAll(() => t.drop())

  it('applies every migration once when run concurrently', async () => {
    const others = Array.from({ length: 4 }, () => connectPostgres(t.url as string, { poolSize: 1 }))
    const results = await Promise.all(others.map((db) => migrate(db)))
    await Promise.all(others.map((db) => db.close()))
    const names = readMigrations().map((m) => m.name)
    expect(results.flat().sort()).toEqual(names)
    const applied = await rows<{ name: string }>(
      t.db.orm,
      sql`SELECT name FROM preflight_migrations ORDER BY name`,
    )
    expect(applied.map((r) => r.name)).toEqual(names)
  })

  it('applies nothing the second time', async () => {
    expect(await migrate(t.db)).toEqual([])
  })
})

// Each applied migration is recorded with the sha256 of its text: a database that a newer release
// migrated, or that applied a migration since edited, is refused before anything runs.
describe('migrate refuses a database the code does not match', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const recorded = () =>
    rows<{ name: string; checksum: string | null }>(
      t.db.orm,
      sql`SELECT name, checksum FROM preflight_migrations ORDER BY name`,
    )

  it('records a checksum for each migration', async () => {
    const list = await recorded()
    expect(list.map((r) => r.name)).toEqual(readMigrations().map((m) => m.name))
    for (const r of list) expect(r.checksum).toMatch(/^[0-9a-f]{64}$/)
  })

  it('refuses a migration applied with other contents, and applies nothing', async () => {
    const edited = readMigrations().map((m) =>
      m.name === '0003_event_bounds.sql' ? { ...m, sql: `${m.sql}\n-- edited` } : m,
    )
    const later = { name: '9000_later.sql', sql: 'CREATE TABLE never_made (id int)' }
    const refused = await migrate(t.db, [...edited, later]).catch((err) => err)
    expect(refused).toBeInstanceOf(MigrationMismatch)
    expect(refused.message).toContain('0003_event_bounds.sql with other contents')
    const made = await rows(t.db.orm, sql`SELECT 1 FROM pg_class WHERE relname = 'never_made'`)
    expect(made).toEqual([])
    // line endings alone are not an edit
    const crlf = readMigrations().map((m) => ({ ...m, sql: m.sql.replaceAll('\n', '\r\n') }))
    expect(await migrate(t.db, crlf)).toEqual([])
  })

  it('refuses a database a newer release migrated', async () => {
    const newer = { name: '9001_newer.sql', sql: 'SELECT 1' }
    expect(await migrate(t.db, [...readMigrations(), newer])).toEqual(['9001_newer.sql'])
    const refused = await migrate(t.db).catch((err) => err)
    expect(refused).toBeInstanceOf(MigrationMismatch)
    expect(refused.message).toContain('migrations this preflight does not have (9001_newer.sql)')
    await t.db.orm.execute(sql`DELETE FROM preflight_migrations WHERE name = '9001_newer.sql'`)
  })

  it('takes the checksums of migrations recorded before there were any', async () => {
    await t.db.orm.execute(sql`UPDATE preflight_migrations SET checksum = NULL`)
    expect(await migrate(t.db)).toEqual([])
    for (const r of await recorded()) expect(r.checksum).toMatch(/^[0-9a-f]{64}$/)
  })
})

// A database created by an earlier release, with reports in it, takes the later migrations and keeps
// every row; the reports read the same through the new indexes.
describe('migrate an existing database', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false })
  })
  afterAll(() => t.drop())

  it('applies the later migrations over stored reports without losing one', async () => {
    const [first, ...later] = readMigrations()
    expect(await migrate(t.db, first ? [first] : [])).toEqual(['0001_init.sql'])
    const seeded = []
    for (const [i, at] of ['2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z'].entries())
      seeded.push((await seedReport(t.db.orm, { at, results: [unmet(`tool-${i}`), met()] })).dispatchId)
    // the second one as a report-incomplete verdict stored it: a result added for a missing one
    await t.db.orm.execute(sql`UPDATE preflight_reports SET reason = 'report-incomplete', outcome = 'unmet'
      WHERE dispatch_id = ${seeded[1]}`)
    await t.db.orm.execute(sql`INSERT INTO requirement_results (report_id, position, subagent_name, kind, requirement,
        status, reason, observed, duration_ms, created_at)
      SELECT id, 2, subagent_name, 'git', 'worktree', 'unmet', 'report-incomplete', '{}', 0, created_at
      FROM preflight_reports WHERE dispatch_id = ${seeded[1]}`)
    const before = await rows<{ status: string }>(
      t.db.orm,
      sql`SELECT * FROM requirement_results ORDER BY report_id, position`,
    )
    expect(await migrate(t.db)).toEqual(later.map((m) => m.name))
    const after = await rows<{ worker_id: string | null }>(
      t.db.orm,
      sql`SELECT * FROM requirement_results ORDER BY report_id, position`,
    )
    // 0016: only the results that are not met keep a row; every report reads as it did
    expect(after.map(({ worker_id: _, ...row }) => row)).toEqual(before.filter((row) => row.status !== 'met'))
    const results = (await listReports(t.db.orm, { limit: 10 })).items.map((r) => r.results)
    expect(results.map((list) => list.map((r) => `${r.requirement} ${r.status}`))).toEqual([
      ['tool-1 unmet', 'node met', 'worktree unmet'],
      ['tool-0 unmet', 'node met'],
    ])
    expect(results[0]?.[2]).toEqual({
      kind: 'git',
      requirement: 'worktree',
      status: 'unmet',
      reason: 'report-incomplete',
      observed: {},
      durationMs: 0,
    })
    // 0014: a result with a reason carries its report's worker
    expect(after.map((row) => row.worker_id)).toEqual(['w-1', 'w-1', 'w-1'])
    const page = await listReports(t.db.orm, { reason: 'not-found', kind: 'exec', limit: 10 })
    expect(page.items.map((r) => r.dispatchId)).toEqual([...seeded].reverse())
    // 0016: the kind filter reads the kinds each report was given
    const git = await listReports(t.db.orm, { kind: 'git', limit: 10 })
    expect(git.items.map((r) => r.dispatchId)).toEqual([seeded[1]])
  })
})

// 0005 fills in, for the dispatches already stored, the worker of their latest claim, when they ended and
// why: the listing's filters find them as they find new ones.
describe('migrate dispatches stored before the listing', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false })
  })
  afterAll(() => t.drop())

  it('backfills worker, end and reasons from the events, completions and reports', async () => {
    const all = readMigrations()
    const before = all.filter((m) => m.name < '0005')
    await migrate(t.db, before)
    const db = t.db.orm
    const report = await seedReport(db, { at: '2026-03-01T00:00:00Z', results: [unmet('pnpm'), met()] })
    const other = await seedReport(db, { at: '2026-03-02T00:00:00Z', results: [met()] })
    const [setup, expired] = [randomUUID(), randomUUID()]
    await db.execute(sql`UPDATE dispatches SET status = 'preflight_failed' WHERE id = ${report.dispatchId}`)
    await db.execute(sql`INSERT INTO dispatches (id, subagent_name, subagent_version, workspace, status, attempt,
        completion, created_at)
      VALUES (${setup}, 'frontend-fixer', 1, '{"repo":"x"}', 'setup_failed', 1,
        '{"status":"setup_failed","reason":"clone-failed","detail":"fatal: repository not found"}', '2026-03-03'),
        (${expired}, 'frontend-fixer', 1, '{"repo":"x"}', 'expired', 2, NULL, '2026-03-04')`)
    await db.execute(sql`INSERT INTO dispatch_events (dispatch_id, attempt, step, detail) VALUES
      (${setup}, 1, 'claimed', '{"workerId":"w-setup"}'),
      (${expired}, 1, 'claimed', '{"workerId":"w-first"}'),
      (${expired}, 1, 'fault', '{"message":"git write-tree failed"}'),
      (${expired}, 2, 'claimed', '{"workerId":"w-second"}')`)

    await migrate(t.db)
    const ids = async (q: Partial<DispatchPageQuery>) =>
      (await listDispatches(db, { limit: 10, ...q })).items.map((i) => i.id)
    expect(await ids({ reason: 'clone-failed' })).toEqual([setup])
    expect(await ids({ reason: 'not-found' })).toEqual([report.dispatchId])
    expect(await ids({ reason: 'fault', worker: 'w-second' })).toEqual([expired])
    expect(await ids({ worker: 'w-first' })).toEqual([])
    const items = (await listDispatches(db, { limit: 10 })).items
    const byId = new Map(items.map((i) => [i.id, i]))
    expect(byId.get(setup)).toMatchObject({ workerId: 'w-setup', endedAt: expect.any(String) })
    expect(byId.get(setup)?.setup).toEqual({
      reason: 'clone-failed',
      outputTail: 'fatal: repository not found',
    })
    expect(byId.get(expired)?.fault?.message).toBe('git write-tree failed')
    expect(byId.get(report.dispatchId)?.preflight?.failed).toEqual([
      { kind: 'exec', requirement: 'pnpm', status: 'unmet', reason: 'not-found' },
    ])
    // still running: no end
    expect(byId.get(other.dispatchId)).toMatchObject({ status: 'running', endedAt: null })
    // 0015: the events are on their dispatch's row, in the order they were written, detail and all
    const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const moved = await rows<{ id: string; events: unknown[] }>(
      db,
      sql`SELECT id, events FROM dispatches WHERE id IN (${expired}, ${other.dispatchId})`,
    )
    expect(new Map(moved.map((d) => [d.id, d.events]))).toEqual(
      new Map([
        [
          expired,
          [
            { step: 'claimed', at, attempt: 1, detail: { workerId: 'w-first' } },
            { step: 'fault', at, attempt: 1, detail: { message: 'git write-tree failed' } },
            { step: 'claimed', at, attempt: 2, detail: { workerId: 'w-second' } },
          ],
        ],
        [other.dispatchId, []],
      ]),
    )
    expect(await rows(db, sql`SELECT to_regclass('dispatch_events') AS t`)).toEqual([{ t: null }])
  })
})
