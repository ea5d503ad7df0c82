import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectPostgres, rows } from '../../src/db/client.js'
import { toApiError } from '../../src/http.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'

describe('database connections', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false })
  })
  afterAll(() => t.drop())

  it('runs every statement under the default statement_timeout', async () => {
    const [row] = await rows<{ statement_timeout: string }>(t.db.orm, sql`SHOW statement_timeout`)
    expect(row?.statement_timeout).toBe('15s')
  })

  it('turns a statement that hit statement_timeout into 503 timeout', async () => {
    const db = connectPostgres(t.url as string, { statementTimeoutMs: 50, poolSize: 1 })
    try {
      const err = await db.orm.execute(sql`SELECT pg_sleep(5)`).catch((e: unknown) => e)
      expect(toApiError(err)).toMatchObject({ status: 503, code: 'timeout' })
    } finally {
      await db.close()
    }
  })
})
