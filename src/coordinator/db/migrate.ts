// Applies migrations/*.sql in name order, once each, under an advisory lock: safe twice and concurrently.
// Each is recorded with the sha256 of its text. A database that holds a migration this build does not
// have (a newer preflight migrated it), or one applied with other contents (an edited migration), is
// refused before anything is applied: either would leave the schema other than the code expects.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Database } from './client.js'

// Walks up from this module (src/coordinator/db, dist/src/coordinator/db, or the CLI's coordinator chunk in
// dist/src/cli) to the package's migrations/ directory.
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url)).replace(
  /\/dist\/migrations\/$/,
  '/migrations/',
)

// Any constant shared by every preflight process; the lock is per database.
const LOCK_KEY = 7_307_011_982
// How long a migrate waits for another one to finish before it gives up (exit 1): longer than a release's
// migrations take, shorter than forever (a session holding the lock that will never commit).
const LOCK_WAIT = '10min'

export interface Migration {
  name: string
  sql: string
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
}

// The database and this build disagree on the migrations.
export class MigrationMismatch extends Error {
  override name = 'MigrationMismatch'
}

// Line endings aside (a checkout may turn \n into \r\n), the file's text.
const checksum = (m: Migration) => createHash('sha256').update(m.sql.replaceAll('\r\n', '\n')).digest('hex')

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`

// Returns the names applied by this call (empty when the database was up to date).
export async function migrate(db: Database, migrations = readMigrations()): Promise<string[]> {
  const sums = new Map(migrations.map((m) => [m.name, checksum(m)]))
  return db.script(async (run) => {
    // Transaction-scoped: released at commit or rollback, whatever happens to this connection. Waiting
    // for it is bounded by LOCK_WAIT, not by the statement timeout: a coordinator that starts while a
    // migration Job applies a long release waits for it to commit instead of failing (then finds nothing
    // left to do); the statements after it run under the timeout again.
    const [timeout] = await run(`SELECT current_setting('statement_timeout') AS t`)
    await run(`SET LOCAL statement_timeout = 0`)
    await run(`SET LOCAL lock_timeout = ${quote(LOCK_WAIT)}`)
    await run(`SELECT pg_advisory_xact_lock(${LOCK_KEY})`)
    await run(`SET LOCAL lock_timeout = 0`)
    await run(`SET LOCAL statement_timeout = ${quote(String(timeout?.t ?? '0'))}`)
    await run(`CREATE TABLE IF NOT EXISTS preflight_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
    // recorded by releases before the checksums: NULL until this build records its own
    await run('ALTER TABLE preflight_migrations ADD COLUMN IF NOT EXISTS checksum char(64)')
    const recorded = (await run('SELECT name, checksum FROM preflight_migrations ORDER BY name')).map(
      (r) => ({
        name: String(r.name),
        checksum: r.checksum === null ? null : String(r.checksum),
      }),
    )
    refuseMismatch(recorded, sums)
    for (const r of recorded)
      if (r.checksum === null)
        await run(
          `UPDATE preflight_migrations SET checksum = ${quote(sums.get(r.name) ?? '')} WHERE name = ${quote(r.name)}`,
        )
    const done = new Set(recorded.map((r) => r.name))
    const applied: string[] = []
    for (const m of migrations) {
      if (done.has(m.name)) continue
      await run(m.sql)
      await run(
        `INSERT INTO preflight_migrations (name, checksum) VALUES (${quote(m.name)}, ${quote(sums.get(m.name) ?? '')})`,
      )
      applied.push(m.name)
    }
    return applied
  })
}

function refuseMismatch(recorded: { name: string; checksum: string | null }[], sums: Map<string, string>) {
  const newer = recorded.filter((r) => !sums.has(r.name)).map((r) => r.name)
  if (newer.length > 0)
    throw new MigrationMismatch(
      `the database holds migrations this preflight does not have (${newer.join(', ')}): a newer release migrated it; run that release or a later one, never an older one`,
    )
  const edited = recorded
    .filter((r) => r.checksum !== null && r.checksum !== sums.get(r.name))
    .map((r) => r.name)
  if (edited.length > 0)
    throw new MigrationMismatch(
      `the database applied ${edited.join(', ')} with other contents than this preflight's: an applied migration is never edited; restore the file as it was and put the change in a new migration`,
    )
}
