// Applies migrations/*.sql in name order, once each, under an advisory lock: safe twice and concurrently.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Database } from './client.js'

// Walks up from this module (src/coordinator/db or dist/src/coordinator/db) to the package's migrations/ directory.
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url)).replace(
  /\/dist\/migrations\/$/,
  '/migrations/',
)

// Any constant shared by every preflight process; the lock is per database.
const LOCK_KEY = 7_307_011_982

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

// Returns the names applied by this call (empty when the database was up to date).
export async function migrate(db: Database, migrations = readMigrations()): Promise<string[]> {
  return db.script(async (run) => {
    // Transaction-scoped: released at commit or rollback, whatever happens to this connection.
    await run(`SELECT pg_advisory_xact_lock(${LOCK_KEY})`)
    await run(`CREATE TABLE IF NOT EXISTS preflight_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
    const done = new Set((await run('SELECT name FROM preflight_migrations')).map((r) => String(r.name)))
    const applied: string[] = []
    for (const m of migrations) {
      if (done.has(m.name)) continue
      await run(m.sql)
      await run(`INSERT INTO preflight_migrations (name) VALUES ('${m.name.replaceAll("'", "''")}')`)
      applied.push(m.name)
    }
    return applied
  })
}
