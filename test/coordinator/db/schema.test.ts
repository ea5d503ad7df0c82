import { sql } from 'drizzle-orm'
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rows } from '../../../src/coordinator/db/client.js'
import * as schema from '../../../src/coordinator/db/schema.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'

// src/coordinator/db/schema.ts is drizzle's view of migrations/*.sql: this keeps the two from drifting apart.
describe('drizzle schema', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const tables = Object.values(schema as Record<string, unknown>).filter((v) => v instanceof PgTable)

  it('declares every column of every migrated table, with its nullability', async () => {
    expect(tables.length).toBeGreaterThan(0)
    for (const table of tables) {
      const { name, columns } = getTableConfig(table)
      const actual = await rows<{ column_name: string; is_nullable: string }>(
        t.db.orm,
        sql`SELECT column_name, is_nullable FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name = ${name} ORDER BY column_name`,
      )
      const declared = columns
        .map((c) => ({ column_name: c.name, is_nullable: c.notNull ? 'NO' : 'YES' }))
        .sort((a, b) => a.column_name.localeCompare(b.column_name))
      expect(declared, name).toEqual(actual)
    }
  })
})
