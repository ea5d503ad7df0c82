// Test databases: a fresh, uniquely named PostgreSQL database per suite (dropped afterwards), copied from
// a template that holds the current migrations (a copy costs a quarter of migrating an empty database).
// Selection: TEST_DATABASE_URL / DATABASE_URL, else the local server at its conventional address when it
// answers, else testcontainers when a Docker engine exists, else a clear failure — never a silent skip. PGlite only through `createPgliteDatabase`.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { alive } from '../../src/cli/pid-lock.js'
import { connectPostgres, type Database, openPglite } from '../../src/coordinator/db/client.js'
import { migrate, readMigrations } from '../../src/coordinator/db/migrate.js'
import { pgliteVersion } from '../../src/coordinator/db/pglite-datadir.js'

export interface TestDatabase {
  // Connection URL of the fresh database (absent for PGlite).
  url: string | undefined
  db: Database
  drop(): Promise<void>
}

export interface TestDatabaseOptions {
  migrate?: boolean
  poolSize?: number
}

export async function createTestDatabase(opts: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const server = await serverUrl()
  const admin = adminOf(server)
  const reuse = opts.migrate !== false && RUN !== undefined
  const open = (name: string) => ({
    name,
    db: connectPostgres(withDatabase(server, name), { poolSize: opts.poolSize ?? 12 }),
  })
  let made = reuse ? await spare(server, open) : undefined
  if (!made) {
    const name = newName()
    const template = opts.migrate === false ? 'template1' : await migratedTemplate(server)
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template}`)
    // a commit does not wait for its WAL to reach the disk (nothing of a test database has to outlive
    // a crash of the server): a quarter less of PostgreSQL's CPU per transaction on the CI machine
    // (pgbench), and each test's writes answer sooner. Every connection to it, the spawned
    // coordinators' too; a database kept for the next suite keeps it.
    await admin.unsafe(`ALTER DATABASE ${name} SET synchronous_commit = off`)
    made = open(name)
  }
  const { name, db } = made
  return {
    url: withDatabase(server, name),
    db,
    async drop() {
      await db.close()
      const kept = reuse ? await fenced(admin, name) : undefined
      if (kept) spares(server).push(kept)
      else await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

// A database an earlier suite of this process kept, emptied and opened; undefined when there is none
// (one that cannot be emptied is dropped).
async function spare(server: string, open: (name: string) => { name: string; db: Database }) {
  const name = spares(server).pop()
  if (!name) return undefined
  const made = open(name)
  if (await emptied(made.db)) return made
  await made.db.close()
  await adminOf(server).unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  return undefined
}

// Migrated databases are used again by the next suite of the same test process (vitest keeps this
// module loaded from one file to the next: isolate: false), emptied, instead of made anew: a CREATE
// DATABASE costs PostgreSQL 0.5 s of CPU on the CI machine, ~80 of them a run. The run's global setup
// names the run (PREFLIGHT_TEST_RUN) and its teardown drops what is left (dropRunDatabases); without
// it (the mutation runs) every database is dropped as before. Connections are what to spare here: a
// new one costs PostgreSQL 40 ms of CPU on that machine (a process forked, and ended), so each test
// process keeps one administrative connection per server, and a kept database is emptied through the
// next suite's own pool.
const RUN = process.env.PREFLIGHT_TEST_RUN
const spareByServer = new Map<string, string[]>()
function spares(server: string): string[] {
  const list = spareByServer.get(server) ?? []
  spareByServer.set(server, list)
  return list
}
const newName = () => `preflight_test_${RUN ? `${RUN}_` : ''}${process.pid}_${randomBytes(4).toString('hex')}`

// One connection per server for CREATE, DROP and RENAME, closed after a minute idle (a test process
// that makes no more databases holds none; vitest ends its workers with SIGTERM).
const admins = new Map<string, postgres.Sql>()
function adminOf(server: string): postgres.Sql {
  let admin = admins.get(server)
  if (!admin) {
    admin = postgres(server, { max: 1, idle_timeout: 60, onnotice: () => {} })
    admins.set(server, admin)
  }
  return admin
}

// A dropped database under a new name, with every connection to it ended: a process a suite left behind
// (a coordinator, a worker) cannot connect to it again and write into the next suite's data. Undefined
// when it cannot be renamed (still in use): the caller drops it.
async function fenced(admin: postgres.Sql, name: string): Promise<string | undefined> {
  const next = newName()
  for (let attempt = 0; attempt < 4; attempt++) {
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name}`
    try {
      await admin.unsafe(`ALTER DATABASE ${name} RENAME TO ${next}`)
      return next
    } catch {}
  }
  return undefined
}

const names = (rows: { name?: unknown }[]) => rows.map((r) => r.name).join('\n')

// A kept database with every table but the migrations' emptied and its sequences back at their start;
// false when it cannot be (or the migrations it records are not the current set): the caller drops it.
// By DELETE, the tables that reference others first, and setval: a TRUNCATE ... RESTART IDENTITY made a
// new file for every table, index and sequence, 80 ms of PostgreSQL's time a suite on the CI machine's
// disk against 12 ms for deleting what a suite wrote.
async function emptied(db: Database): Promise<boolean> {
  try {
    return await db.script(async (run) => {
      const tables = await run(`
        SELECT c.oid::int AS id, quote_ident(c.relname) AS name,
          (SELECT coalesce(json_agg(f.confrelid::int), '[]') FROM pg_constraint f
           WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) AS refs
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> 'preflight_migrations'`)
      const order = referencingFirst(tables as { id: number; name: string; refs: number[] }[])
      await run(order.map((name) => `DELETE FROM ${name};`).join('\n'))
      await run(`
        SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false)
        FROM pg_sequences WHERE schemaname = 'public'`)
      const applied = await run('SELECT name FROM preflight_migrations ORDER BY name')
      return names(applied) === names(readMigrations())
    })
  } catch {
    return false
  }
}

// The tables' names, each after every table that references it (a cycle throws: the caller drops the
// database). `refs` as JSON: the pool reads no arrays (fetch_types: false, docs/http-api.md).
function referencingFirst(tables: { id: number; name: string; refs: number[] }[]): string[] {
  const left = new Map(tables.map((t) => [t.id, t]))
  const order: string[] = []
  while (left.size > 0) {
    const free = [...left.values()].filter((t) => ![...left.values()].some((o) => o.refs.includes(t.id)))
    if (free.length === 0) throw new Error('the foreign keys make a cycle')
    for (const t of free) {
      order.push(t.name)
      left.delete(t.id)
    }
  }
  return order
}

// The global setup and teardown: drops the databases test processes kept for reuse, of this run
// (`run`) or of runs whose main process is gone (a run killed before its teardown). Quietly nothing
// when the tests' server is not configured and does not answer (a container, gone with its run).
export async function dropRunDatabases(run?: string): Promise<void> {
  const server = await knownServer()
  if (!server) return
  const admin = postgres(server, { max: 1, onnotice: () => {}, connect_timeout: 5 })
  try {
    const kept = await admin<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE datname ~ '^preflight_test_p[0-9]+r[0-9a-f]+_'`
    for (const { datname } of kept) {
      const owner = /^preflight_test_(p(\d+)r[0-9a-f]+)_/.exec(datname)
      if (owner?.[1] !== run && alive(Number(owner?.[2]))) continue
      await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
    }
  } finally {
    await admin.end({ timeout: 5 })
  }
}

// A run's name: its main process's pid, then a random part (so a later run can tell a dead run's).
export function runName(): string {
  return `p${process.pid}r${randomBytes(4).toString('hex')}`
}

// One template per set of migrations (named by their hash, so runs of other versions, e.g. in other
// worktrees, never share one), made once per server under an advisory lock and kept for later runs. It
// is built under another name and renamed when complete: a run killed while building leaves no template
// with half the migrations.
let templates: Promise<string> | undefined

function migratedTemplate(server: string): Promise<string> {
  templates ??= buildTemplate(server).catch((err) => {
    templates = undefined
    throw err
  })
  return templates
}

async function buildTemplate(server: string): Promise<string> {
  // the bookkeeping too: a template migrated by another migrate() records them differently
  const hash = createHash('sha256').update(migrate.toString())
  for (const m of readMigrations()) hash.update(`${m.name}\0${m.sql}\0`)
  const name = `preflight_template_${hash.digest('hex').slice(0, 16)}`
  const admin = postgres(server, { max: 1, onnotice: () => {} })
  try {
    await admin`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`
    const [found] = await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`
    if (!found) {
      const building = `${name}_building`
      await admin.unsafe(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
      await admin.unsafe(`CREATE DATABASE ${building}`)
      const db = connectPostgres(withDatabase(server, building), { poolSize: 1 })
      try {
        await migrate(db)
      } finally {
        await db.close()
      }
      await admin.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`)
    }
    return name
  } finally {
    await admin.end({ timeout: 5 })
  }
}

// Any constant of the test support's own (the session lock ends with the connection).
const TEMPLATE_LOCK = 7_307_011_983

// A PGlite database with the migrations applied, in a temp directory: a copy of a template directory.
// A new PGlite data directory (src/coordinator/db/pglite-datadir.ts) and its migrations cost 2–7 s of
// CPU, opening a copy of a migrated one about 1 s. The template is kept between runs under
// node_modules/.cache, named by PGlite's version and the migrations (as the PostgreSQL template above),
// and made by the first suite that needs it; two suites making it at once each make their own, and the
// first to finish names it.
export async function createPgliteDatabase(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'preflight-pglite-'))
  await cp(await pgliteTemplate(), dir, { recursive: true })
  const db = await openPglite(dir)
  return {
    url: undefined,
    db,
    async drop() {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

// The template directory itself (read-only: copy it), made on first use.
export async function pgliteTemplate(): Promise<string> {
  const hash = createHash('sha256').update(pgliteVersion()).update(migrate.toString())
  for (const m of readMigrations()) hash.update(`${m.name}\0${m.sql}\0`)
  const template = join(CACHE, `pglite-${hash.digest('hex').slice(0, 16)}`)
  if (existsSync(template)) return template
  await mkdir(CACHE, { recursive: true })
  const building = await mkdtemp(`${template}-building-`)
  const db = await openPglite(building)
  try {
    await migrate(db)
  } finally {
    await db.close()
  }
  // one rename names it whole; a template another suite named meanwhile stays, and this copy goes
  await rename(building, template).catch(() => rm(building, { recursive: true, force: true }))
  return template
}

const CACHE = join(import.meta.dirname, '..', '..', 'node_modules', '.cache', 'preflight-test')
export function withDatabase(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

let container: Promise<string> | undefined

async function serverUrl(): Promise<string> {
  const known = await knownServer()
  if (known) return known
  if (!dockerAvailable()) throw new Error(NO_DATABASE)
  container ??= startContainer()
  return container
}

// TEST_DATABASE_URL / DATABASE_URL, else the local server when it answers, else undefined.
async function knownServer(): Promise<string | undefined> {
  const url = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL
  if (url) return url
  const local = process.env.PREFLIGHT_TEST_LOCAL_URL ?? LOCAL_URL
  return (await answers(local)) ? local : undefined
}

// The PostgreSQL a developer machine (and CI) runs locally; PREFLIGHT_TEST_LOCAL_URL overrides it.
const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

// Answered once per address and test process when it answers (each connection costs the server 40 ms
// of CPU on CI's machine).
const answered = new Map<string, Promise<boolean>>()
function answers(url: string): Promise<boolean> {
  let probe = answered.get(url)
  if (!probe) {
    probe = probeOnce(url)
    answered.set(url, probe)
    // a failed probe is asked again next time (a loaded machine may miss the connect timeout once)
    probe.then((ok) => ok || answered.delete(url))
  }
  return probe
}

async function probeOnce(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} })
  try {
    await sql`select 1`
    return true
  } catch {
    return false
  } finally {
    await sql.end({ timeout: 1 })
  }
}

const NO_DATABASE =
  'no test database: set TEST_DATABASE_URL to a PostgreSQL the tests may create databases on ' +
  '(e.g. postgres://postgres@127.0.0.1:5432/postgres), or run a Docker engine with @testcontainers/postgresql installed'

function dockerAvailable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock')
}

// testcontainers is optional (not a dependency): imported lazily, by a name TypeScript does not resolve.
async function startContainer(): Promise<string> {
  const moduleName = '@testcontainers/postgresql'
  let mod: {
    PostgreSqlContainer: new (image: string) => { start(): Promise<{ getConnectionUri(): string }> }
  }
  try {
    mod = await import(moduleName)
  } catch {
    throw new Error(`${NO_DATABASE} (a Docker engine exists but ${moduleName} is not installed)`)
  }
  const started = await new mod.PostgreSqlContainer('postgres:17-alpine').start()
  return started.getConnectionUri()
}
