// The pool behind its circuit, on a real PostgreSQL: while the circuit is open nothing but its probe
// reaches the pool, and what waited in the pool's queue when it opened fails at once and never runs.
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { connectPostgres, type Database, rows } from '../../../src/coordinator/db/client.js'
import { errorCodes } from '../../../src/coordinator/db/unreachable.js'
import { toApiError } from '../../../src/coordinator/http/http.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { startTcpProxy } from '../../support/tcp-proxy.js'
import { waitFor } from '../../support/wait.js'

let t: TestDatabase
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false })
  await t.db.orm.execute(sql`CREATE TABLE marks (what text NOT NULL)`)
})
beforeEach(async () => {
  await t.db.orm.execute(sql`DELETE FROM marks`)
})
afterAll(() => t.drop())

const marks = async () =>
  (await rows<{ what: string }>(t.db.orm, sql`SELECT what FROM marks`)).map((r) => r.what)
const closed = (db: Database) =>
  waitFor(() => db.circuit?.isOpen === false, { timeoutMs: 2_000, what: 'the circuit to close' })

// Holds the pool's one connection in a transaction and terminates its backend once `queue` has put
// its work in the pool's queue: the lost connection opens the circuit, and the pool reconnects 25–50 ms
// later for what waits (the database is there all along).
async function loseTheConnectionWhile(db: Database, queue: () => Promise<unknown>) {
  let pid: number | undefined
  const holding = db.orm
    .transaction(async (tx) => {
      pid = (await rows<{ pid: number }>(tx, sql`SELECT pg_backend_pid() AS pid`))[0]?.pid
      // the connection stays in this transaction until its backend is terminated
      await new Promise(() => {})
    })
    .catch((e: unknown) => e)
  await waitFor(() => pid !== undefined, { what: 'the transaction to hold the connection' })
  const waiting = queue()
  // postgres.js hands a statement to the pool once a microtask after it is awaited: let it get there
  await new Promise((resolve) => setImmediate(resolve))
  await t.db.orm.execute(sql`SELECT pg_terminate_backend(${pid}::int)`)
  expect(toApiError(await holding)).toMatchObject({ status: 503, code: 'unavailable' })
  return waiting
}

describe('the pool behind its circuit', () => {
  // Only what waits for a connection is failed when the circuit opens: a statement or transaction that
  // already runs on a healthy connection will commit, and answering it 503 ("not sent") would make a
  // client that follows Retry-After write it twice.
  it('lets a statement and a transaction already running on other connections finish when it opens', async () => {
    const db = connectPostgres(t.url as string, { poolSize: 3 })
    try {
      const statement = rows(db.orm, sql`INSERT INTO marks SELECT 'statement' FROM pg_sleep(1)`).catch(
        (e: unknown) => e,
      )
      const transaction = db.orm
        .transaction(async (tx) => {
          await tx.execute(sql`INSERT INTO marks VALUES ('transaction')`)
          await tx.execute(sql`SELECT pg_sleep(1)`)
        })
        .catch((e: unknown) => e)
      const sleeping = async () =>
        (
          await rows<{ n: number }>(
            t.db.orm,
            sql`SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
                  AND query LIKE '%pg_sleep(1)%'`,
          )
        )[0]?.n === 2
      await waitFor(sleeping, { what: 'both to run' })
      await loseTheConnectionWhile(db, async () => undefined)
      expect(await statement).toEqual([])
      expect(await transaction).toBeUndefined()
      expect((await marks()).sort()).toEqual(['statement', 'transaction'])
    } finally {
      await db.close()
    }
  })

  it('fails a statement still waiting for a connection when the circuit opens, and never runs it', async () => {
    const db = connectPostgres(t.url as string, { poolSize: 1 })
    try {
      const insert = await loseTheConnectionWhile(db, () =>
        rows(db.orm, sql`INSERT INTO marks VALUES ('statement')`).catch((e: unknown) => e),
      )
      // failed by the circuit as it opened, not by (or after) the reconnect
      expect(errorCodes(await insert)).toContain('CIRCUIT_OPEN')
      expect(toApiError(await insert)).toMatchObject({ status: 503, code: 'unavailable' })
      // the reconnect ran what waited in the queue before the probe that closed the circuit
      await closed(db)
      expect(await marks()).toEqual([])
    } finally {
      await db.close()
    }
  })

  it('fails a transaction still waiting for its BEGIN when the circuit opens, and never runs its body', async () => {
    const db = connectPostgres(t.url as string, { poolSize: 1 })
    let bodyRan = false
    try {
      const transaction = await loseTheConnectionWhile(db, () =>
        db.orm
          .transaction(async (tx) => {
            bodyRan = true
            await tx.execute(sql`INSERT INTO marks VALUES ('transaction')`)
          })
          .catch((e: unknown) => e),
      )
      expect(errorCodes(await transaction)).toContain('CIRCUIT_OPEN')
      await closed(db)
      // its BEGIN ran on the new connection, ahead of the probe: the body was not run, nothing stored
      expect(bodyRan).toBe(false)
      expect(await marks()).toEqual([])
      expect(await rows(db.orm, sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
    } finally {
      await db.close()
    }
  })

  it('lets nothing but its probe reach the pool while open, and fails every statement at once', async () => {
    const target = new URL(t.url as string)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const db = connectPostgres(proxy.via(t.url as string), { poolSize: 4 })
    try {
      expect(await rows(db.orm, sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
      await proxy.refuse()
      const lost = await rows(db.orm, sql`SELECT 1 AS one`).catch((e: unknown) => e)
      expect(toApiError(lost)).toMatchObject({ status: 503, code: 'unavailable' })
      expect(db.circuit?.isOpen).toBe(true)
      // a database host that accepts connections and answers nothing: each connect would take 5 s
      await proxy.stall()
      const before = proxy.accepted
      const started = performance.now()
      const statements = await Promise.all(
        Array.from({ length: 40 }, () => rows(db.orm, sql`SELECT 1 AS one`).catch((e: unknown) => e)),
      )
      const ms = performance.now() - started
      for (const s of statements) expect(errorCodes(s)).toContain('CIRCUIT_OPEN')
      expect(ms).toBeLessThan(1_000)
      // the probe's connection at most: one at a time, and it waits for its connect
      expect(proxy.accepted - before).toBeLessThanOrEqual(1)
      await proxy.forward()
      await closed(db)
      expect(await rows(db.orm, sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
    } finally {
      await db.close()
      await proxy.close()
    }
  })
})
