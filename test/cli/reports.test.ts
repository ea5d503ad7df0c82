// `preflight reports` against a coordinator served on an ephemeral port: the CLI in this process
// (test/support/cli.ts), the binary spawned for its exit status.
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { syncBootstrapTokens } from '../../src/coordinator/http/auth.js'
import { type RunningServer, startServer } from '../../src/coordinator/server.js'
import { colours } from '../../src/log/colour.js'
import { runCli } from '../support/cli.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'
import { errored, met, seedReport, unmet } from '../support/reports-fixtures.js'

const BIN = fileURLToPath(new URL('../../bin/preflight.js', import.meta.url))
const OPERATOR = 'cli-operator-token-0123456789'
const WORKER = 'cli-worker-token-0123456789'

let t: TestDatabase
let server: RunningServer
const ids: string[] = []

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 })
  await syncBootstrapTokens(t.db.orm, [
    { role: 'operator', token: OPERATOR },
    { role: 'worker', token: WORKER },
  ])
  for (let day = 1; day <= 7; day++) {
    const results = day % 2 ? [met('node'), unmet('pnpm')] : [met('node')]
    ids.push(
      (await seedReport(t.db.orm, { subagent: 'web', at: `2026-06-0${day}T08:00:00Z`, results })).dispatchId,
    )
  }
  await seedReport(t.db.orm, {
    subagent: 'api',
    at: '2026-06-08T08:00:00Z',
    results: [errored('src/**/*.ts')],
  })
  await seedBulk(t, 520)
  server = await startServer({ db: t.db, port: 0, host: '127.0.0.1' })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await t?.drop()
})

// Reports with no results for subagent "bulk": more than one page of 500, to make the CLI follow the cursor.
async function seedBulk(database: TestDatabase, n: number) {
  await database.db.orm.execute(sql`
    with d as (
      insert into dispatches (id, subagent_name, subagent_version, workspace, status, attempt)
      select gen_random_uuid(), 'web', 1, '{"repo":"x"}', 'running', 1 from generate_series(1, ${n})
      returning id)
    insert into preflight_reports (dispatch_id, attempt, subagent_name, subagent_version, worker_id, outcome,
      decision, declared, report, created_at)
    select id, 1, 'bulk', 1, 'w-bulk', 'met', 'proceed', false, '{"results":[]}',
      timestamptz '2026-05-01' + row_number() over () * interval '1 second'
    from d`)
}

// In this process (test/support/cli.ts); `spawned` runs the real binary for the exit codes.
async function reports(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(['reports', ...args], {
    PREFLIGHT_COORDINATOR: undefined,
    PREFLIGHT_URL: server.url,
    PREFLIGHT_TOKEN: OPERATOR,
    ...env,
  })
  // as execa gives them, without the last newline
  return { ...r, stdout: r.stdout.replace(/\n$/, ''), stderr: r.stderr.replace(/\n$/, '') }
}

function spawned(args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [BIN, 'reports', ...args], {
    reject: false,
    env: { PREFLIGHT_URL: server.url, PREFLIGHT_TOKEN: OPERATOR, ...env },
    extendEnv: false,
  })
}

describe('preflight reports', () => {
  it('prints every matching report as JSON, newest first', async () => {
    const r = await reports(['--subagent', 'web', '--format', 'json'])
    expect(r.exitCode).toBe(0)
    const items = JSON.parse(r.stdout) as { dispatchId: string }[]
    expect(items.map((i) => i.dispatchId)).toEqual([...ids].reverse())
  })

  it('follows nextCursor past the first page of 500', async () => {
    const r = await reports(['--subagent', 'bulk', '--format', 'json'])
    const items = JSON.parse(r.stdout) as { dispatchId: string; createdAt: string }[]
    expect(items).toHaveLength(520)
    expect(new Set(items.map((i) => i.dispatchId)).size).toBe(520)
    expect(items.at(-1)?.createdAt).toBe('2026-05-01T00:00:01.000Z')
  })

  it('stops at --limit, also across a page boundary', async () => {
    const small = await reports(['--subagent', 'web', '--limit', '3', '--format', 'json'])
    expect(JSON.parse(small.stdout)).toHaveLength(3)
    const large = await reports(['--subagent', 'bulk', '--limit', '510', '--format', 'json'])
    expect(JSON.parse(large.stdout)).toHaveLength(510)
  })

  it('passes the filters to the coordinator', async () => {
    const r = await reports(['--outcome', 'unmet', '--since', '2026-06-03T00:00:00Z', '--format', 'json'])
    const items = JSON.parse(r.stdout) as { createdAt: string; outcome: string }[]
    expect(items.map((i) => i.createdAt)).toEqual([
      '2026-06-07T08:00:00.000Z',
      '2026-06-05T08:00:00.000Z',
      '2026-06-03T08:00:00.000Z',
    ])
  })

  it('names the failed requirement, its reason and what was observed in text', async () => {
    const r = await reports(['--outcome', 'unmet', '--limit', '1'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('web v1  UNMET')
    expect(r.stdout).toContain('unmet  exec pnpm — not-found; searched /usr/bin, /bin')
    expect(r.stdout).not.toContain('exec node')
  })

  it('paints the outcome and the status words with FORCE_COLOR, not with NO_COLOR', async () => {
    const c = colours(true)
    const forced = await reports(['--outcome', 'unmet', '--limit', '1'], { FORCE_COLOR: '1', NO_COLOR: '' })
    expect(forced.stdout).toContain(`web v1  ${c.red('UNMET')}  `)
    expect(forced.stdout).toContain(`  ${c.red('unmet')}  exec pnpm`)
    const plain = await reports(['--outcome', 'unmet', '--limit', '1'], { FORCE_COLOR: '1', NO_COLOR: '1' })
    expect(plain.stdout).toContain('web v1  UNMET  ')
  })

  it('says when a report had every requirement met', async () => {
    const r = await reports(['--outcome', 'met', '--limit', '1'])
    expect(r.stdout).toContain('all 1 requirements met')
  })

  it('says when nothing matches', async () => {
    const r = await reports(['--subagent', 'nobody'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe('no reports match')
  })

  it('takes the coordinator and token from flags too', async () => {
    const r = await reports(
      ['--coordinator', server.url, '--token', OPERATOR, '--subagent', 'api', '--format', 'json'],
      {
        PREFLIGHT_URL: '',
        PREFLIGHT_TOKEN: '',
      },
    )
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toHaveLength(1)
  })
})

describe('preflight reports failures', () => {
  const usage = [
    ['an unknown outcome', ['--outcome', 'failed']],
    ['a since that is not ISO', ['--since', 'yesterday']],
    ['an unknown kind', ['--kind', 'env']],
    ['a limit of 0', ['--limit', '0']],
    ['an unknown format', ['--format', 'junit']],
    ['an unknown flag', ['--colour']],
  ] as const
  for (const [what, args] of usage) {
    it(`exits 2 with one sentence for ${what}`, async () => {
      const r = await reports([...args])
      expect(r.exitCode).toBe(2)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stdout).toBe('')
    })
  }

  it('exits 2 without a coordinator URL (the binary)', async () => {
    const r = await spawned([], { PREFLIGHT_URL: '' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('--coordinator')
  })

  it('exits 2 without a token', async () => {
    const r = await reports([], { PREFLIGHT_TOKEN: '' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('--token')
  })

  it('exits 1 when the token is not an operator’s', async () => {
    const r = await reports([], { PREFLIGHT_TOKEN: WORKER })
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toContain('403')
  })

  it('exits 1 when the coordinator cannot be reached', async () => {
    const r = await reports([], { PREFLIGHT_URL: 'http://127.0.0.1:9' })
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toContain('cannot reach the coordinator')
  })
})
