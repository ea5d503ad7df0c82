// Statements made once as text: one placeholder per parameter, the same rows from postgres.js (prepared)
// and PGlite (through drizzle), and a parameter left out refused before anything runs.
import { PgDialect } from 'drizzle-orm/pg-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonText } from '../../../src/coordinator/db/sql.js'
import { asSql, run, statement } from '../../../src/coordinator/db/statement.js'
import { createPgliteDatabase, createTestDatabase, type TestDatabase } from '../../support/db.js'

const echo = statement<
  { a: number; b: string | null; c: string },
  { a: number; b: string | null; c: unknown }
>((p) => `SELECT ${p.a}::int AS a, ${p.b}::text AS b, ${p.c}::jsonb AS c WHERE ${p.a}::int > 0`)

describe('statement', () => {
  it('numbers each parameter once, in the order of first use', () => {
    expect(echo.names).toEqual(['a', 'b', 'c'])
    expect(echo.text).toBe('SELECT $1::int AS a, $2::text AS b, $3::jsonb AS c WHERE $1::int > 0')
  })

  it('refuses a $n in the text that is no parameter: asSql() would take it for one', () => {
    expect(() => statement<{ a: number }, never>((p) => `SELECT ${p.a}::int, '$2' AS price`)).toThrow(
      /\$2 is no parameter/,
    )
  })

  it('is the same statement as drizzle SQL, with the values as parameters', () => {
    const query = new PgDialect().sqlToQuery(asSql(echo, { a: 1, b: null, c: '{"x":1}' }))
    expect(query.sql).toBe('SELECT $1::int AS a, $2::text AS b, $3::jsonb AS c WHERE $4::int > 0')
    expect(query.params).toEqual([1, null, '{"x":1}', 1])
  })

  it('takes JSON as text, and a value not given, or null, as NULL: never the JSON null', () => {
    expect([jsonText(undefined), jsonText(null), jsonText(['gpu']), jsonText('x')]).toEqual([
      null,
      null,
      '["gpu"]',
      '"x"',
    ])
  })

  const databases: [string, () => Promise<TestDatabase>][] = [
    ['PostgreSQL', () => createTestDatabase({ migrate: false })],
    ['PGlite', createPgliteDatabase],
  ]
  describe.each(databases)('on %s', (_, create) => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await create()
    })
    afterAll(() => t.drop())

    it('answers the rows, NULL for a null value', async () => {
      expect(await run(t.db.orm, echo, { a: 2, b: null, c: '{"x":[1]}' })).toEqual([
        { a: 2, b: null, c: { x: [1] } },
      ])
      expect(await run(t.db.orm, echo, { a: 0, b: 'b', c: '1' })).toEqual([])
    })

    it('refuses a parameter that is not given, naming it', async () => {
      const partial = { a: 1, c: '1' } as unknown as { a: number; b: string; c: string }
      await expect(run(t.db.orm, echo, partial)).rejects.toThrow(/parameter b is not given/)
    })
  })
})
