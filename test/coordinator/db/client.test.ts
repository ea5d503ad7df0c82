import { spawnSync } from 'node:child_process'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectPostgres, PREPARED, rows } from '../../../src/coordinator/db/client.js'
import { jsonb } from '../../../src/coordinator/db/sql.js'
import { toApiError } from '../../../src/coordinator/http/http.js'
import { createTestDatabase, pgliteTemplate, type TestDatabase } from '../../support/db.js'
import { startTcpProxy } from '../../support/tcp-proxy.js'
import { waitFor } from '../../support/wait.js'

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

  it('turns a connection the server terminated (57P01, as at shutdown) into 503 unavailable', async () => {
    const db = connectPostgres(t.url as string, { poolSize: 1 })
    try {
      const [me] = await rows<{ pid: number }>(db.orm, sql`SELECT pg_backend_pid() AS pid`)
      const sleeping = db.orm.execute(sql`SELECT pg_sleep(5)`).catch((e: unknown) => e)
      // terminated while the sleep runs on it, not before it was sent (then a new connection would take it)
      await waitFor(
        async () =>
          (
            await rows(
              t.db.orm,
              sql`SELECT 1 FROM pg_stat_activity WHERE pid = ${me?.pid}::int AND query LIKE '%pg_sleep%'`,
            )
          ).length === 1,
        { timeoutMs: 5_000, what: 'the sleep running on its backend' },
      )
      await t.db.orm.execute(sql`SELECT pg_terminate_backend(${me?.pid}::int)`)
      expect(toApiError(await sleeping)).toMatchObject({ status: 503, code: 'unavailable' })
      // The lost connection opened the circuit: statements fail 503 until its probe, sent at once,
      // reaches the database (a reconnect, 25–50 ms away), and then they answer.
      const next = await rows(db.orm, sql`SELECT 1 AS one`).catch((e: unknown) => e)
      if (!Array.isArray(next)) expect(toApiError(next)).toMatchObject({ status: 503, code: 'unavailable' })
      // (5 s: on a loaded machine the reconnect itself took over a second)
      await waitFor(() => db.circuit?.isOpen === false, { timeoutMs: 5_000, what: 'the circuit to close' })
      expect(await rows(db.orm, sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
    } finally {
      await db.close()
    }
  })

  it('runs a PREPARED statement as a named prepared statement of its connection', async () => {
    const db = connectPostgres(t.url as string, { poolSize: 1 })
    try {
      await rows(db.orm, sql`SELECT ${1}::int AS prepared_probe`, PREPARED)
      const named = await rows<{ name: string }>(
        db.orm,
        sql`SELECT name FROM pg_prepared_statements WHERE statement LIKE '%AS prepared_probe'`,
      )
      expect(named).toHaveLength(1)
    } finally {
      await db.close()
    }
  })

  it('answers a PREPARED statement with the same values as an unprepared one', async () => {
    const query = () =>
      sql`SELECT ${jsonb({ a: [1, 'x'] })} AS j, timestamptz '2026-01-01 00:00:00+00' AS t, ${7}::int AS n,
                 ${null}::text AS missing`
    expect(await rows(t.db.orm, query(), PREPARED)).toEqual(await rows(t.db.orm, query()))
  })

  it('turns a PREPARED statement that hit statement_timeout into 503 timeout', async () => {
    const db = connectPostgres(t.url as string, { statementTimeoutMs: 50, poolSize: 1 })
    try {
      const err = await rows(db.orm, sql`SELECT pg_sleep(${5})`, PREPARED).catch((e: unknown) => e)
      expect(toApiError(err)).toMatchObject({ status: 503, code: 'timeout' })
    } finally {
      await db.close()
    }
  })

  // postgres.js (3.4.9, upstream issues 1192, 1205 and 1223) runs its array-type lookup as the first
  // statement of each new connection and drops that promise: a connection lost just then was an
  // unhandled rejection, which ends a coordinator's process in the middle of a database outage. The
  // client connects without the lookup (fetch_types: false): what fails is the query, which answers 503.
  it('loses a connection at its first statement without an unhandled rejection', async () => {
    const target = new URL(t.url as string)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const db = connectPostgres(proxy.via(t.url as string), { poolSize: 1 })
    try {
      await proxy.cutAtFirstQueryThenRefuse()
      const err = await rows(db.orm, sql`SELECT 1 AS one`).catch((e: unknown) => e)
      expect(toApiError(err)).toMatchObject({ status: 503, code: 'unavailable' })
      // an unhandled rejection is reported after the microtasks of the turn that made it
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(unhandled).toEqual([])
      await proxy.forward()
      await waitFor(() => db.circuit?.isOpen === false, { timeoutMs: 2_000, what: 'the circuit to close' })
      expect(await rows(db.orm, sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
    } finally {
      process.off('unhandledRejection', onUnhandled)
      await db.close()
      await proxy.close()
    }
  })
})

// A fresh node running `code` (ESM, with the compiled modules of dist/, as the binary runs them): how it
// ended, within `timeoutMs`, and the URLs of the modules it loaded (seen by a load hook).
async function runNode(code: string, timeoutMs = 30_000) {
  const dir = await mkdtemp(join(tmpdir(), 'preflight-loaded-'))
  try {
    const list = join(dir, 'loaded')
    const hook = `import { appendFileSync } from 'node:fs'
      export async function load(url, context, next) { appendFileSync(${JSON.stringify(list)}, url + '\\n'); return next(url, context) }`
    const register = `import { register } from 'node:module'
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}))`
    const child = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', code],
      // the database is the one `code` names, whatever the tests' environment says
      { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, DATABASE_URL: '' } },
    )
    const loaded = (await readFile(list, 'utf8')).split('\n').filter(Boolean)
    return { status: child.status, signal: child.signal, stderr: child.stderr, loaded }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const DIST = join(import.meta.dirname, '../../../dist/src/cli')
const isPglite = (url: string) => url.includes('/node_modules/@electric-sql/pglite/')

// The embedded database of a copy of the tests' template, opened and closed in a fresh node.
async function openAndCloseEmbedded() {
  const dataDir = await mkdtemp(join(tmpdir(), 'preflight-pglite-'))
  try {
    await cp(await pgliteTemplate(), join(dataDir, 'pgdata'), { recursive: true })
    return await runNode(`
      const { openDatabase } = await import(${JSON.stringify(join(DIST, 'database.js'))})
      const db = await openDatabase({ dataDir: ${JSON.stringify(dataDir)} }, () => {})
      await db.close()`)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

describe('PGlite, imported only where it is used', () => {
  it('is not loaded by a coordinator on PostgreSQL', async () => {
    const ran = await runNode(`
      await import(${JSON.stringify(join(DIST, 'coordinator.js'))})
      const { openDatabase } = await import(${JSON.stringify(join(DIST, 'database.js'))})
      const db = await openDatabase({ url: 'postgres://127.0.0.1:1/none' }, () => {})
      await db.close()`)
    expect(ran).toMatchObject({ status: 0, stderr: '' })
    expect(ran.loaded.some((url) => url.endsWith('/dist/src/coordinator/server.js'))).toBe(true)
    expect(ran.loaded.filter(isPglite)).toEqual([])
  })

  it('is loaded when the database is embedded', async () => {
    const ran = await openAndCloseEmbedded()
    expect(ran.loaded.filter(isPglite)).not.toEqual([])
  }, 60_000)
})

describe('the embedded database', () => {
  // open, it holds the event loop open (openPglite): closed, it must let go
  it('lets the process end by itself once it is closed', async () => {
    expect(await openAndCloseEmbedded()).toMatchObject({ status: 0, signal: null, stderr: '' })
  }, 60_000)
})
