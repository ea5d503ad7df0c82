// Database connections: postgres.js for a real PostgreSQL, PGlite (embedded) when no URL is given.
import type { SQL } from 'drizzle-orm'
import { type PgDatabase, PgDialect, type PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { Circuit } from './circuit.js'
import { gatePool } from './gate.js'
import type { MadeFrom } from './pglite-datadir.js'

// drizzle over either driver; also the type of a transaction handle (tx extends it).
export type Orm = PgDatabase<PgQueryResultHKT>

export interface Database {
  kind: 'postgres' | 'pglite'
  orm: Orm
  // The circuit in front of the pool (db/circuit.ts): postgres.js only. PGlite runs in this process,
  // with no connection to lose: a statement there fails as itself, never for want of a connection.
  circuit?: Circuit
  // Runs SQL text (may hold several statements: migrations) inside one transaction.
  script<T>(fn: (run: ScriptRunner) => Promise<T>): Promise<T>
  // Subscribes to NOTIFY on a channel (real PostgreSQL only); returns the unsubscribe. `onListen` is
  // told each time the subscription is made again after its connection was lost (notifications sent
  // meanwhile are lost).
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onListen?: () => void,
  ): Promise<() => Promise<void>>
  close(): Promise<void>
}

// Runs SQL text; answers the rows of its last statement.
export type ScriptRunner = (text: string) => Promise<Record<string, unknown>[]>

export interface ConnectOptions {
  statementTimeoutMs?: number
  poolSize?: number
}

export interface PgliteOptions extends ConnectOptions {
  // told before a first start makes the data directory, and how (seconds of work)
  making?: (from: MadeFrom) => void
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000

// postgres.js waits min(3^n / 100, 20) s (jittered) before the nth reconnect, n counted across the pool
// and reset only by a connection that opens: after a few seconds of outage, requests went on waiting up
// to 20 s after the database was back. Here: 50 ms doubling to at most 500 ms, jittered, so the pool
// finds the database within half a second of its return. A refused connect costs nothing to repeat.
export const reconnectDelaySeconds = (retries: number) =>
  (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** Math.max(0, retries - 1), 0.5)

// A host that accepts and never answers holds a connect this long (postgres.js default: 30 s).
const CONNECT_TIMEOUT_SECONDS = 5

// postgres.js (3.4.9) runs an array-type lookup as the first statement of each new connection and
// drops its promise: a connection lost during the lookup (an outage) rejected it unhandled, which ends
// the process. Without the lookup postgres.js parses no array column: none is read (webhooks.events is
// selected as JSON). Upstream issues 1192, 1205, 1223 of porsager/postgres.
const FETCH_TYPES = false

// The postgres.js client behind each Orm that connectPostgres made, for prepared statements.
const clients = new WeakMap<Orm, postgres.Sql>()
const dialect = new PgDialect()

// The postgres.js client of an Orm that connectPostgres made; undefined for PGlite and a transaction.
// drizzle's driver set it up: its json and jsonb parameters go as the text they are given (postgres.js's
// own default would JSON.stringify a JSON text again), which is what statement.ts and rows() pass.
export const clientOf = (db: Orm): postgres.Sql | undefined => clients.get(db)

export function connectPostgres(url: string, opts: ConnectOptions = {}): Database {
  const pool = postgres(url, {
    max: opts.poolSize ?? 10,
    onnotice: () => {},
    backoff: reconnectDelaySeconds,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    fetch_types: FETCH_TYPES,
    connection: {
      statement_timeout: opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      application_name: 'preflight',
    },
  })
  // The probe goes to the pool past the circuit: it is the one statement let through while it is open.
  const circuit = new Circuit(() => pool.unsafe('select 1'))
  const client = gatePool(pool, circuit)
  const orm = drizzlePostgres(client) as unknown as Orm
  clients.set(orm, client)
  return {
    kind: 'postgres',
    orm,
    circuit,
    script: (fn) => client.begin((tx) => fn((text) => runSimple(tx, text))) as never,
    async listen(channel, onNotify, onListen) {
      let first = true
      // postgres.js calls back on the first LISTEN too: only the later ones are news.
      const relistened = () => {
        if (!first) onListen?.()
        first = false
      }
      // LISTEN has a connection of its own, outside the pool and the circuit, and reconnects by itself
      const sub = await pool.listen(channel, (payload) => onNotify(payload), relistened)
      return () => sub.unlisten()
    },
    close() {
      circuit.stop()
      return pool.end({ timeout: 5 })
    },
  }
}

// PGlite's buffer pool: PostgreSQL's default 128 MB is zeroed in wasm at every start (0.3–0.5 s of a
// coordinator's start on a 2-core machine); the embedded database of one machine reads the rest of its
// pages from the OS's cache
const PGLITE_SHARED_BUFFERS = '32MB'

export async function openPglite(dataDir: string | undefined, opts: PgliteOptions = {}): Promise<Database> {
  // imported here: 0.1–0.3 s of start-up that a coordinator on PostgreSQL does not need
  const [{ PGlite }, { drizzle: drizzlePglite }, { isDataDir, makeDataDir }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
    import('./pglite-datadir.js'),
  ])
  // PGlite works in promise continuations and holds no handle of the event loop open. With none open,
  // Node waits for every V8 background task (the TurboFan compiles of the wasm PGlite runs) before it
  // runs the next continuation: 0.2–0.5 s of stall after a coordinator's first statements on a 2-core
  // machine. A timer held while the database is open keeps the loop from waiting on them.
  const awake = setInterval(() => {}, 2 ** 30)
  try {
    if (dataDir && !isDataDir(dataDir)) await makeDataDir(dataDir, opts.making)
    const pg = new PGlite(dataDir, {
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
    })
    await pg.waitReady
    await pg.exec(
      `SET statement_timeout = ${Math.trunc(opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS)}`,
    )
    const orm = drizzlePglite(pg) as unknown as Orm
    return {
      kind: 'pglite',
      orm,
      script: (fn) => pg.transaction((tx) => fn(async (text) => (await tx.exec(text)).at(-1)?.rows ?? [])),
      // One process holds a PGlite database: the in-process waker is all the wake-up there is.
      listen: async () => async () => {},
      close: () => pg.close().finally(() => clearInterval(awake)),
    }
  } catch (err) {
    clearInterval(awake)
    throw err
  }
}

// The simple protocol runs several statements in one call; postgres.js then answers one result each.
async function runSimple(tx: postgres.TransactionSql, text: string): Promise<Record<string, unknown>[]> {
  const result = (await tx.unsafe(text).simple()) as unknown[]
  const last = result.length > 0 && Array.isArray(result[0]) ? result.at(-1) : result
  return (last ?? []) as Record<string, unknown>[]
}

export interface QueryOptions {
  // A named prepared statement on postgres.js (parsed and planned once per connection, one round
  // trip): for the dispatch cycle's fixed statements. drizzle's execute() never prepares, and an
  // unprepared statement with parameters costs two round trips and a parse + plan each time.
  // Not for the report queries: a cached generic plan cannot pick per value (see docs/reports.md).
  prepare?: boolean
}

// Rows of a raw statement, whichever driver ran it. T is taken on trust: where the statement selects a
// table's columns, T is picked from SqlRow (schema.ts), so that it follows the schema.
export async function rows<T>(db: Orm, query: SQL, opts: QueryOptions = {}): Promise<T[]> {
  const client = opts.prepare ? clients.get(db) : undefined
  if (client) {
    const built = dialect.sqlToQuery(query)
    return (await client.unsafe(built.sql, built.params as postgres.ParameterOrJSON<never>[], {
      prepare: true,
    })) as unknown as T[]
  }
  const result = (await db.execute(query)) as unknown
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[]
}

export async function one<T>(db: Orm, query: SQL, opts: QueryOptions = {}): Promise<T | undefined> {
  return (await rows<T>(db, query, opts))[0]
}

export const PREPARED: QueryOptions = { prepare: true }
