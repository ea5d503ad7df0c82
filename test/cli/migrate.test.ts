import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readMigrations } from '../../src/coordinator/db/migrate.js'
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
    const first = await run(process.execPath, [BIN, 'migrate', '--database-url', t.url as string])
    const names = readMigrations().map((m) => m.name)
    expect(names.slice(0, 2)).toEqual(['0001_init.sql', '0002_reason_indexes.sql'])
    expect(first.stdout).toBe(`applied ${names.join(', ')}\n`)
    const second = await run(process.execPath, [BIN, 'migrate', '--database-url', t.url as string])
    expect(second.stdout).toBe('up to date\n')
  })

  it('refuses a database URL that is not postgres:// with exit 2', async () => {
    const err = await run(process.execPath, [BIN, 'migrate', '--database-url', 'mysql://x']).catch((e) => e)
    expect(err).toMatchObject({ code: 2 })
  })
})
