// `preflight migrate`: the CLI in this process (test/support/cli.ts), the binary spawned for its exit status.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readMigrations } from '../../src/coordinator/db/migrate.js'
import { runCli } from '../support/cli.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'

const run = promisify(execFile)
const BIN = new URL('../../bin/preflight.js', import.meta.url).pathname

describe('preflight migrate', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false })
  })
  afterAll(() => t.drop())

  it('applies the migrations, then reports the database up to date', async () => {
    const first = await runCli(['migrate', '--database-url', t.url as string])
    const names = readMigrations().map((m) => m.name)
    expect(names.slice(0, 2)).toEqual(['0001_init.sql', '0002_reason_indexes.sql'])
    expect(first).toMatchObject({ exitCode: 0, stdout: `applied ${names.join(', ')}\n` })
    const second = await runCli(['migrate', '--database-url', t.url as string])
    expect(second).toMatchObject({ exitCode: 0, stdout: 'up to date\n' })
  })

  it('refuses, in one line and exit 1, a database a newer release migrated', async () => {
    await t.db.orm.execute(
      sql`INSERT INTO preflight_migrations (name, checksum) VALUES ('9002_newer.sql', NULL)`,
    )
    const err = await run(process.execPath, [BIN, 'migrate', '--database-url', t.url as string]).catch(
      (e) => e,
    )
    await t.db.orm.execute(sql`DELETE FROM preflight_migrations WHERE name = '9002_newer.sql'`)
    expect(err).toMatchObject({ code: 1 })
    expect(err.stderr).toBe(
      'preflight: the database holds migrations this preflight does not have (9002_newer.sql): a newer release migrated it; run that release or a later one, never an older one\n',
    )
  })

  // the real binary's exit status
  it('refuses a database URL that is not postgres:// with exit 2', async () => {
    const err = await run(process.execPath, [BIN, 'migrate', '--database-url', 'mysql://x']).catch((e) => e)
    expect(err).toMatchObject({ code: 2 })
  })
})
