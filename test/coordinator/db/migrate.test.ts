import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectPostgres, rows } from '../../../src/coordinator/db/client.js'
import { migrate, readMigrations } from '../../../src/coordinator/db/migrate.js'
import { listReports } from '../../../src/coordinator/db/reports.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { met, seedReport, unmet } from '../routes/reports-fixtures.js'

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
    const before = await rows(t.db.orm, sql`SELECT * FROM requirement_results ORDER BY report_id, position`)
    expect(await migrate(t.db)).toEqual(later.map((m) => m.name))
    expect(await rows(t.db.orm, sql`SELECT * FROM requirement_results ORDER BY report_id, position`)).toEqual(
      before,
    )
    const page = await listReports(t.db.orm, { reason: 'not-found', kind: 'exec', limit: 10 })
    expect(page.items.map((r) => r.dispatchId)).toEqual(seeded.reverse())
  })
})
