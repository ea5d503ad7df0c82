import { sql } from 'drizzle-orm'
import { getTableConfig, type PgColumn, PgTable } from 'drizzle-orm/pg-core'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import type { DispatchStatus, Metadata } from '../../../src/contract/index.js'
import { rows } from '../../../src/coordinator/db/client.js'
import * as schema from '../../../src/coordinator/db/schema.js'
import { createPgliteDatabase, createTestDatabase, type TestDatabase } from '../../support/db.js'

// src/coordinator/db/schema.ts is drizzle's view of migrations/*.sql: this keeps the two from drifting
// apart, and the row types derived from it (SqlRow) true to what the drivers answer.
describe('drizzle schema', () => {
  let t: TestDatabase
  let pglite: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
    pglite = await createPgliteDatabase()
  })
  afterAll(async () => {
    await pglite.drop()
    await t.drop()
  })

  const tables = Object.values(schema as Record<string, unknown>).filter((v) => v instanceof PgTable)
  const columns = tables.flatMap((table) => getTableConfig(table).columns)
  // drizzle writes char(n) where PostgreSQL says character(n)
  const sqlType = (c: PgColumn) => c.getSQLType().replace(/^char\(/, 'character(')
  const byName = (a: { column: string }, b: { column: string }) => a.column.localeCompare(b.column)

  // A value of each declared column type, and what SqlRow says a raw statement answers for it.
  const answers: Record<string, { value: string; kinds: string[] }> = {
    uuid: { value: `'00000000-0000-0000-0000-000000000000'`, kinds: ['string'] },
    text: { value: `'x'`, kinds: ['string'] },
    'character(64)': { value: `'x'`, kinds: ['string'] },
    integer: { value: '1', kinds: ['number'] },
    bigint: { value: '1', kinds: ['string', 'number'] },
    'double precision': { value: '1.5', kinds: ['number'] },
    boolean: { value: 'true', kinds: ['boolean'] },
    jsonb: { value: `'{"a": 1}'`, kinds: ['object'] },
    'timestamp with time zone': { value: 'now()', kinds: ['string'] },
    'text[]': { value: `'{x}'`, kinds: ['string', 'object'] },
  }

  it('declares every column of each table it declares, with its type and nullability', async () => {
    expect(tables.length).toBeGreaterThan(0)
    for (const table of tables) {
      const { name, columns } = getTableConfig(table)
      const actual = await rows<{ column: string; type: string; nullable: boolean }>(
        t.db.orm,
        sql`SELECT attname AS column, format_type(atttypid, atttypmod) AS type, NOT attnotnull AS nullable
            FROM pg_attribute WHERE attrelid = to_regclass(${name}) AND attnum > 0 AND NOT attisdropped`,
      )
      const declared = columns.map((c) => ({ column: c.name, type: sqlType(c), nullable: !c.notNull }))
      expect(declared.sort(byName), name).toEqual(actual.sort(byName))
    }
  })

  it('types a raw row by column name: timestamps as text, bigints as text or a number, null where nullable', () => {
    type Dispatch = schema.SqlRow<typeof schema.dispatches>
    expectTypeOf<Dispatch['subagent_name']>().toEqualTypeOf<string>()
    expectTypeOf<Dispatch['status']>().toEqualTypeOf<DispatchStatus>()
    expectTypeOf<Dispatch['metadata']>().toEqualTypeOf<Metadata | null>()
    expectTypeOf<Dispatch['created_at']>().toEqualTypeOf<string>()
    expectTypeOf<Dispatch['ended_at']>().toEqualTypeOf<string | null>()
    expectTypeOf<Dispatch['event_bytes']>().toEqualTypeOf<string | number>()
    expectTypeOf<schema.SqlRow<typeof schema.preflightReports>['kinds']>().toEqualTypeOf<string | string[]>()
    expectTypeOf<Dispatch>().not.toHaveProperty('subagentName')
  })

  it('answers each declared column type from a raw statement as SqlRow types it, on both drivers', async () => {
    const types = [...new Set(columns.map(sqlType))]
    expect(types.filter((type) => !(type in answers))).toEqual([])
    for (const { db } of [t, pglite]) {
      for (const type of types) {
        const { value, kinds } = answers[type] as { value: string; kinds: string[] }
        const [row] = await rows<{ v: unknown }>(db.orm, sql.raw(`SELECT ${value}::${type} AS v`))
        expect(kinds, `${type} from ${db.kind}`).toContain(typeof row?.v)
      }
    }
  })
})
