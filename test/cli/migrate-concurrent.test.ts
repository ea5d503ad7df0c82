// Two migration Jobs racing, and coordinators starting while one runs (deploy/kubernetes): real
// `preflight` processes on one PostgreSQL database, serialised by the migrations' advisory lock.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectPostgres, rows } from '../../src/coordinator/db/client.js'
import { readMigrations } from '../../src/coordinator/db/migrate.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'
import { freePort } from '../support/e2e.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)
const BIN = new URL('../../bin/preflight.js', import.meta.url).pathname
const env = { PATH: process.env.PATH ?? '' }

describe('preflight migrate, twice at once', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false })
  })
  afterAll(() => t.drop())

  it('applies every migration once: one process applies them, the other finds the database up to date', async () => {
    const migrate = () => run(process.execPath, [BIN, 'migrate', '--database-url', t.url as string], { env })
    const outputs = (await Promise.all([migrate(), migrate()])).map((r) => r.stdout).sort()
    const names = readMigrations().map((m) => m.name)
    expect(outputs).toEqual([`applied ${names.join(', ')}\n`, 'up to date\n'])
    const applied = await rows<{ name: string }>(
      t.db.orm,
      sql`SELECT name FROM preflight_migrations ORDER BY name`,
    )
    expect(applied.map((r) => r.name)).toEqual(names)
  })
})

describe('a coordinator that starts while a migration holds the lock', () => {
  let t: TestDatabase
  let coordinator: ChildProcess | undefined
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(async () => {
    coordinator?.kill('SIGKILL')
    await t.drop()
  })

  it('waits for it past its statement timeout, then serves', async () => {
    // the migration Job, as the lock sees it: a transaction holding the migrations' advisory lock
    const job = connectPostgres(t.url as string, { poolSize: 1 })
    let release = () => {}
    const released = new Promise<void>((r) => {
      release = r
    })
    const holding = job.script(async (q) => {
      await q('SELECT pg_advisory_xact_lock(7307011982)')
      await released
    })
    const port = await freePort()
    const args = [
      'coordinator',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--database-url',
      t.url as string,
    ]
    coordinator = spawn(process.execPath, [BIN, ...args, '--statement-timeout-ms', '300'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    coordinator.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = new Promise<number | null>((r) => coordinator?.once('exit', (code) => r(code)))
    try {
      // its wait on the lock, seen by PostgreSQL, lasts longer than three statement timeouts
      await waitFor(
        async () => {
          const waiting = await rows<{ n: number }>(
            t.db.orm,
            sql`SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE wait_event = 'advisory' AND now() - query_start > interval '1 second'`,
          )
          return Number(waiting[0]?.n) === 1
        },
        { timeoutMs: 20_000, everyMs: 100, what: () => `the coordinator waiting on the lock\n${stderr}` },
      )
      expect(coordinator.exitCode).toBeNull()
    } finally {
      release()
      await holding
      await job.close()
    }
    await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      { timeoutMs: 20_000, everyMs: 100, what: () => `the coordinator ready\n${stderr}` },
    )
    coordinator.kill('SIGTERM')
    expect(await exited).toBe(0)
  })
})
