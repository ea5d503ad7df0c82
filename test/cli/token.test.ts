// `preflight token create|list|revoke` against a database of its own, or through a coordinator
// (--coordinator): the CLI in this process (test/support/cli.ts), the binary spawned for its lock on the
// embedded database's directory.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rows } from '../../src/coordinator/db/client.js'
import { findActiveToken } from '../../src/coordinator/db/tokens.js'
import { createToken, hashToken } from '../../src/coordinator/http/auth.js'
import { startServer } from '../../src/coordinator/server.js'
import { runCli } from '../support/cli.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)
const BIN = new URL('../../bin/preflight.js', import.meta.url).pathname

const token = (t: TestDatabase, ...args: string[]) =>
  runCli(['token', ...args, '--database-url', t.url as string], { PREFLIGHT_DEBUG: undefined })

describe('preflight token create', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  it('prints a new token and stores only its hash with the role', async () => {
    const r = await token(t, 'create', '--role', 'worker')
    expect(r.exitCode).toBe(0)
    const made = r.stdout.trim()
    expect(made.length).toBeGreaterThanOrEqual(32)
    const stored = await rows<{ token_hash: string; role: string }>(
      t.db.orm,
      sql`SELECT token_hash, role FROM api_tokens`,
    )
    expect(stored).toEqual([{ token_hash: hashToken(made), role: 'worker' }])
  })

  it('refuses an unknown role with exit 2', async () => {
    expect(await token(t, 'create', '--role', 'root')).toMatchObject({
      exitCode: 2,
      stderr: expect.stringMatching(/--role must be one of/),
    })
  })
})

describe('preflight token list and revoke', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const preflight = (...args: string[]) => token(t, ...args)

  it('lists id, role, state, dates and label, never a secret or its hash', async () => {
    const made = await createToken(t.db.orm, 'worker', { label: 'runner-7' })
    const { stdout } = await preflight('list')
    expect(stdout).toMatch(new RegExp(`^${made.id}\\s+worker\\s+active\\s+\\S+\\s+-\\s+-\\s+runner-7$`, 'm'))
    const json = JSON.parse((await preflight('list', '--format', 'json')).stdout)
    expect(json).toContainEqual(expect.objectContaining({ id: made.id, role: 'worker', state: 'active' }))
    for (const out of [stdout, JSON.stringify(json)]) {
      expect(out).not.toContain(made.token)
      expect(out).not.toContain(hashToken(made.token))
    }
  })

  it('revokes by id, and a running coordinator refuses the token at once', async () => {
    const made = await createToken(t.db.orm, 'operator', { label: 'leaked' })
    const server = await startServer({
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      config: { tokenCacheMs: 600_000 },
    })
    const use = async () =>
      (await fetch(`${server.url}/v1/subagents/x`, { headers: { authorization: `Bearer ${made.token}` } }))
        .status
    try {
      expect(await use()).toBe(404)
      const { stdout } = await preflight('revoke', String(made.id))
      expect(stdout).toBe(`revoked token ${made.id} (operator, leaked)\n`)
      const started = Date.now()
      await waitFor(async () => (await use()) === 401, { timeoutMs: 2_000, what: 'the token to be refused' })
      expect(Date.now() - started).toBeLessThan(2_000)
    } finally {
      await server.stop()
    }
    expect((await preflight('list')).stdout).toMatch(new RegExp(`^${made.id}\\s+operator\\s+revoked`, 'm'))
  })

  it('exits 1 for an unknown id and 2 for one that is not a whole number', async () => {
    expect(await preflight('revoke', '987654')).toMatchObject({
      exitCode: 1,
      stderr: expect.stringMatching(/no token with id 987654/),
    })
    expect(await preflight('revoke', 'abc')).toMatchObject({ exitCode: 2 })
    expect(await preflight('revoke')).toMatchObject({ exitCode: 2 })
  })

  it('creates a token that expires with --expires-in, and refuses a duration it cannot read', async () => {
    const { stdout } = await preflight('create', '--role', 'worker', '--expires-in', '2h')
    const found = await findActiveToken(t.db.orm, hashToken(stdout.trim()))
    const hours = ((found?.expires_ms ?? 0) - Date.now()) / 3_600_000
    expect(hours).toBeGreaterThan(1.99)
    expect(hours).toBeLessThanOrEqual(2)
    // a bare number has no unit to read it in (the `…-ms` flags read one as milliseconds)
    for (const bad of ['soon', '90', '1.5h', '500ms']) {
      expect(await preflight('create', '--role', 'worker', '--expires-in', bad)).toMatchObject({
        exitCode: 2,
        stderr: `preflight: --expires-in must be a number and a unit (s, m, h, d), e.g. 90d; got "${bad}"\n`,
      })
    }
  })
})

describe('the embedded database directory', () => {
  // a real process: its cwd, an environment without DATABASE_URL, a lock held by another pid
  it('is refused while another live process holds its lock', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'preflight-lock-'))
    try {
      await mkdir(join(cwd, '.preflight'))
      await writeFile(join(cwd, '.preflight', 'lock'), String(process.pid))
      const env = { ...process.env }
      delete env.DATABASE_URL
      const err = await run(process.execPath, [BIN, 'token', 'create', '--role', 'worker'], {
        cwd,
        env,
      }).catch((e: { code: number; stderr: string }) => e)
      expect(err).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/in use by another preflight process.*--coordinator URL/),
      })
    } finally {
      await rm(cwd, { recursive: true, force: true })
    }
  })
})

describe('preflight token --coordinator', () => {
  let t: TestDatabase
  let server: Awaited<ReturnType<typeof startServer>>
  let admin: string
  beforeAll(async () => {
    t = await createTestDatabase()
    admin = (await createToken(t.db.orm, 'admin')).token
    server = await startServer({ db: t.db, port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await server?.stop()
    await t?.drop()
  })

  // no database flag: the coordinator's admin routes are the only way in
  const through = (as: string, ...args: string[]) =>
    runCli(['token', ...args, '--coordinator', server.url], { PREFLIGHT_TOKEN: as, DATABASE_URL: undefined })

  it('creates, lists and revokes through the running coordinator, with an admin token', async () => {
    const made = await through(
      admin,
      'create',
      '--role',
      'operator',
      '--label',
      'laptop',
      '--expires-in',
      '1h',
    )
    expect(made.exitCode).toBe(0)
    const secret = made.stdout.trim()
    const [found] = await rows<{ id: number; label: string; expires_at: Date }>(
      t.db.orm,
      sql`SELECT id::float8 AS id, label, expires_at FROM api_tokens WHERE token_hash = ${hashToken(secret)}`,
    )
    expect(found).toMatchObject({ label: 'laptop' })
    expect(new Date(found?.expires_at ?? 0).getTime()).toBeGreaterThan(Date.now() + 3_500_000)
    const listed = await through(admin, 'list', '--format', 'json')
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({ id: found?.id, label: 'laptop' }),
    )
    expect(listed.stdout).not.toContain(secret)
    const revoked = await through(admin, 'revoke', String(found?.id))
    expect(revoked).toMatchObject({ exitCode: 0, stdout: `revoked token ${found?.id} (operator, laptop)\n` })
    expect(await findActiveToken(t.db.orm, hashToken(secret))).toBeUndefined()
    expect((await through(admin, 'revoke', '987654')).exitCode).toBe(1)
  })

  it('is refused (exit 1, the 403) for a token that is not an admin, and for both ways at once (exit 2)', async () => {
    const operator = (await createToken(t.db.orm, 'operator')).token
    const r = await through(operator, 'create', '--role', 'admin')
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toContain('403')
    const both = await runCli(
      ['token', 'list', '--coordinator', server.url, '--database-url', t.url as string],
      {
        PREFLIGHT_TOKEN: admin,
      },
    )
    expect(both).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('not both') })
  })
})
