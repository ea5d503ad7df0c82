import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashToken } from '../../src/auth.js'
import { rows } from '../../src/db/client.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'

const run = promisify(execFile)
const BIN = new URL('../../bin/preflight.js', import.meta.url).pathname

describe('preflight token create', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  it('prints a new token and stores only its hash with the role', async () => {
    const { stdout } = await run(process.execPath, [
      BIN,
      'token',
      'create',
      '--role',
      'worker',
      '--database-url',
      t.url as string,
    ])
    const token = stdout.trim()
    expect(token.length).toBeGreaterThanOrEqual(32)
    const stored = await rows<{ token_hash: string; role: string }>(
      t.db.orm,
      sql`SELECT token_hash, role FROM api_tokens`,
    )
    expect(stored).toEqual([{ token_hash: hashToken(token), role: 'worker' }])
  })

  it('refuses an unknown role with exit 2', async () => {
    const err = await run(process.execPath, [
      BIN,
      'token',
      'create',
      '--role',
      'root',
      '--database-url',
      t.url as string,
    ]).catch((e: { code: number; stderr: string }) => e)
    expect(err).toMatchObject({ code: 2, stderr: expect.stringMatching(/--role must be one of/) })
  })
})

describe('the embedded database directory', () => {
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
        stderr: expect.stringMatching(/in use by another preflight process/),
      })
    } finally {
      await rm(cwd, { recursive: true, force: true })
    }
  })
})
