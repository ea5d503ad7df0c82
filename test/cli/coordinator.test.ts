import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runRefused } from '../support/cli.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'

const BIN = join(import.meta.dirname, '../../bin/preflight.js')
const TOKEN = 'spawned-orchestrator-token-0123456789'

interface Spawned {
  child: ChildProcess
  url: string
  stderr: () => string
  exit: Promise<number | null>
}

// Starts `preflight coordinator` on a free port (PREFLIGHT_PORT, as the image sets it; the end-to-end
// tests give --port) and resolves once it says where it listens.
function startCoordinator(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Spawned> {
  const child = spawn(process.execPath, [BIN, 'coordinator', '--host', '127.0.0.1', ...args], {
    cwd,
    env: { ...env, PREFLIGHT_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const m = /listening on (http:\/\/[^\s"]+)/.exec(err)
      if (m?.[1]) resolve({ child, url: m[1], stderr: () => err, exit })
    })
    void exit.then((code) => reject(new Error(`coordinator exited with ${code}: ${err}`)))
  })
}

const envWithout = (extra: NodeJS.ProcessEnv) => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  delete env.DATABASE_URL
  return env
}

// `preflight coordinator` in this process, for a refusal: it comes before the database is opened, and the
// database given is one that cannot be reached, so a refusal that came too late would exit 1 here, not
// serve. No PREFLIGHT_* variable but those given; no signal handler is left installed.
const refused = (args: string[], env: Record<string, string> = {}) =>
  runRefused(
    ['coordinator', '--host', '127.0.0.1', '--database-url', 'postgres://127.0.0.1:1/none', ...args],
    { DATABASE_URL: undefined, ...env },
  )

describe('preflight coordinator (spawned)', () => {
  let t: TestDatabase
  let cwd: string
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false })
    cwd = await mkdtemp(join(tmpdir(), 'preflight-coordinator-'))
  })
  afterAll(async () => {
    await t.drop()
    await rm(cwd, { recursive: true, force: true })
  })

  it('serves healthz and readyz on PostgreSQL, seeds bootstrap tokens and exits 0 on SIGTERM', async () => {
    const env = envWithout({ PREFLIGHT_BOOTSTRAP_TOKENS: `orchestrator:${TOKEN}` })
    const s = await startCoordinator(['--database-url', t.url as string], env, cwd)
    try {
      // PREFLIGHT_PORT=0 was taken: a free port, not the default 8080
      expect(new URL(s.url).port).not.toBe('8080')
      expect(await (await fetch(`${s.url}/healthz`)).json()).toEqual({ status: 'ok' })
      expect(await (await fetch(`${s.url}/readyz`)).json()).toEqual({ status: 'ok', database: 'postgres' })
      const r = await fetch(`${s.url}/v1/subagents/none`, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(r.status).toBe(404)
    } finally {
      s.child.kill('SIGTERM')
    }
    expect(await s.exit).toBe(0)
    // its log: JSON lines (stderr is not a terminal), an access record per request, never the token
    const records = s
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(records.every((r) => r.name === 'coordinator' && typeof r.time === 'string')).toBe(true)
    expect(records).toContainEqual(
      expect.objectContaining({ msg: 'request', route: '/v1/subagents/:name', status: 404, method: 'GET' }),
    )
    expect(records.at(-1)).toMatchObject({ level: 'info', msg: 'shutting down' })
    expect(s.stderr()).not.toContain(TOKEN)
  })

  it('runs on embedded PGlite under ./.preflight when no database URL is given, and says so', async () => {
    const s = await startCoordinator([], envWithout({}), cwd)
    try {
      expect(s.stderr()).toMatch(/embedded PGlite under .*\.preflight/)
      // a second instead of initdb's five (test/coordinator/db/pglite-datadir.test.ts); its log is all a
      // process of its own shows of how it made the database
      expect(s.stderr()).toMatch(/first start: making the database in .*pgdata from the build's initdb image/)
      expect(await (await fetch(`${s.url}/readyz`)).json()).toEqual({ status: 'ok', database: 'pglite' })
    } finally {
      s.child.kill('SIGTERM')
    }
    expect(await s.exit).toBe(0)
  }, 120_000) // a first start makes the data directory and migrates it: seconds on a busy machine

  it('stops a bootstrap token that a restart no longer lists', async () => {
    const OLD = 'spawned-old-token-0123456789abcdef'
    const NEW = 'spawned-new-token-0123456789abcdef'
    const status = async (url: string, token: string) =>
      (await fetch(`${url}/v1/subagents/none`, { headers: { authorization: `Bearer ${token}` } })).status
    const first = await startCoordinator(
      ['--database-url', t.url as string],
      envWithout({ PREFLIGHT_BOOTSTRAP_TOKENS: `orchestrator:${OLD}` }),
      cwd,
    )
    try {
      expect(await status(first.url, OLD)).toBe(404)
    } finally {
      first.child.kill('SIGTERM')
    }
    expect(await first.exit).toBe(0)
    const second = await startCoordinator(
      ['--database-url', t.url as string],
      envWithout({ PREFLIGHT_BOOTSTRAP_TOKENS: `orchestrator:${NEW}` }),
      cwd,
    )
    try {
      expect(await status(second.url, OLD)).toBe(401)
      expect(await status(second.url, NEW)).toBe(404)
    } finally {
      second.child.kill('SIGTERM')
    }
    expect(await second.exit).toBe(0)
  })

  it('puts GET /metrics behind PREFLIGHT_METRICS_TOKEN when it is set', async () => {
    const metricsToken = 'spawned-metrics-token-0123456789'
    const s = await startCoordinator(
      ['--database-url', t.url as string],
      envWithout({ PREFLIGHT_METRICS_TOKEN: metricsToken }),
      cwd,
    )
    try {
      expect((await fetch(`${s.url}/metrics`)).status).toBe(401)
      const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
      expect(res.status).toBe(200)
    } finally {
      s.child.kill('SIGTERM')
    }
    expect(await s.exit).toBe(0)
  })
})

describe('preflight coordinator refusals (in process)', () => {
  it('refuses a PREFLIGHT_METRICS_TOKEN shorter than 16 characters with exit 2', async () => {
    expect(await refused([], { PREFLIGHT_METRICS_TOKEN: 'short' })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('PREFLIGHT_METRICS_TOKEN must be at least 16 characters'),
    })
  })

  it('refuses a malformed PREFLIGHT_BOOTSTRAP_TOKENS with exit 2', async () => {
    const { code, stderr } = await refused([], { PREFLIGHT_BOOTSTRAP_TOKENS: 'root:short' })
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain('PREFLIGHT_BOOTSTRAP_TOKENS')
  })

  it('refuses a headers timeout over the receive timeout with exit 2 (Node would refuse it later)', async () => {
    expect(await refused(['--headers-timeout-ms', '40000'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        '--headers-timeout-ms (40000) must not be over --receive-timeout-ms (30000)',
      ),
    })
    expect(await refused(['--receive-timeout-ms', '5000'])).toMatchObject({ code: 2 })
  })

  it.each([
    ['PREFLIGHT_LEASE_MS', 'abc', 'must be a duration from 100ms to 1d'],
    ['PREFLIGHT_MAX_ATTEMPTS', 'many', 'must be a whole number from 1 to 1000'],
    ['PREFLIGHT_PORT', 'http', 'must be a whole number from 0 to 65535'],
    ['PORT', '99999', 'must be a whole number from 0 to 65535'],
    ['PREFLIGHT_LOG_LEVEL', 'loud', 'must be one of trace, debug, info'],
  ])(
    'refuses %s=%s with exit 2, naming the variable and not a flag never given',
    async (name, value, says) => {
      const { code, stderr } = await refused([], { [name]: value })
      expect(code).toBe(2)
      expect(stderr).toMatch(new RegExp(`^preflight: ${name} ${says}[^\n]*, got "${value}"\n$`))
      expect(stderr).not.toContain('--')
    },
  )

  it('takes durations with a unit from its flags and PREFLIGHT_LEASE_MS', async () => {
    const durations = ['--lease-ms', '--sweep-ms', '--claim-wait-cap-ms', '--priority-aging-ms']
      .concat(['--statement-timeout-ms', '--request-timeout-ms', '--keep-alive-timeout-ms'])
      .flatMap((flag) => [flag, '10s'])
    // past every duration: the database URL is the next thing refused
    const past = ['--database-url', 'mysql://127.0.0.1/none']
    for (const [args, env] of [
      [[...durations, '--headers-timeout-ms', '250ms', '--receive-timeout-ms', '1m'], {}],
      [[], { PREFLIGHT_LEASE_MS: '60s' }],
    ] as const) {
      expect(await refused([...args, ...past], env)).toEqual({
        code: 2,
        stderr: 'preflight: the database URL must start with postgres:// or postgresql://\n',
      })
    }
  })

  // PREFLIGHT_LOG_LEVEL, read by the same code, in test/cli/args.test.ts
  it('refuses a --log-level it does not know with exit 2, naming the levels', async () => {
    expect(await refused(['--log-level', 'loud'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--log-level must be one of trace, debug, info'),
    })
  })
})
