import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectPostgres, rows } from '../../src/db/client.js'
import { migrate, readMigrations } from '../../src/db/migrate.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'

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
