// A query that outlives the statement_timeout answers 503 `timeout` (the client may retry), not a 500,
// and the coordinator answers again as soon as the database does. The slow query is made real: another
// connection holds a lock the report listing must wait for, and statement_timeout counts lock waits.
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../../src/coordinator/app.js'
import { connectPostgres, type Database } from '../../../src/coordinator/db/client.js'
import { syncBootstrapTokens } from '../../../src/coordinator/http/auth.js'
import { tokens } from '../../support/app.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'

let t: TestDatabase
let db: Database
let locker: postgres.Sql

beforeAll(async () => {
  t = await createTestDatabase()
  await syncBootstrapTokens(t.db.orm, [{ role: 'operator', token: tokens.operator }])
  db = connectPostgres(t.url as string, { poolSize: 2, statementTimeoutMs: 300 })
  locker = postgres(t.url as string, { max: 1, onnotice: () => {} })
})

afterAll(async () => {
  await locker?.end()
  await db?.close()
  await t?.drop()
})

const listReports = (app: ReturnType<typeof createApp>) =>
  app.request('/v1/reports', { headers: { authorization: `Bearer ${tokens.operator}` } })

describe('statement_timeout', () => {
  it('answers 503 timeout while the database does not answer in time, 200 once it does', async () => {
    const app = createApp({ db, config: {} })
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve
    })
    const holding = locker.begin(async (tx) => {
      await tx`LOCK TABLE preflight_reports IN ACCESS EXCLUSIVE MODE`
      locked()
      await held
    })
    await isLocked
    const slow = await listReports(app)
    release()
    await holding
    expect(slow.status).toBe(503)
    expect(((await slow.json()) as { error: { code: string } }).error.code).toBe('timeout')
    expect((await listReports(app)).status).toBe(200)
  })
})
