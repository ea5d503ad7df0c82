// `preflight dispatches create` against a coordinator served on an ephemeral port: the CLI in this
// process (test/support/cli.ts), the dispatch it made read back over HTTP, and driven by a worker's
// calls to its end for --wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lastEventIds } from '../../src/coordinator/db/events.js'
import { DispatchWatch } from '../../src/coordinator/dispatch/watch.js'
import { tokens } from '../support/app.js'
import { runCli } from '../support/cli.js'
import { definition, fenceOf, reportFor } from '../support/fixtures.js'
import { type Served, serveCoordinator } from '../support/served.js'
import { waitFor } from '../support/wait.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const REPO = 'https://git.example.invalid/app.git'

let s: Served
// the server's: `watch.waiting` tells when a wait is parked
let watch: DispatchWatch
const request: Served['request'] = (method, path, opts) => s.request(method, path, opts)

beforeAll(async () => {
  s = await serveCoordinator((t) => {
    watch = new DispatchWatch((ids) => lastEventIds(t.db.orm, ids), 1_000)
    return { watch }
  })
  for (const name of ['web', 'api'])
    expect((await request('POST', '/v1/subagents', { body: definition(name) })).status).toBe(201)
}, 60_000)

afterAll(() => s?.stop())

async function create(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(['dispatches', 'create', ...args], {
    PREFLIGHT_COORDINATOR: undefined,
    PREFLIGHT_DEBUG: undefined,
    PREFLIGHT_URL: s.server.url,
    PREFLIGHT_TOKEN: tokens.orchestrator,
    ...env,
  })
  return { ...r, stdout: r.stdout.replace(/\n$/, ''), stderr: r.stderr.replace(/\n$/, '') }
}

// A dispatch created here, out of the way of the next test's claim.
const cancel = (id: string) => request('POST', `/v1/dispatches/${id}/cancel`)

describe('preflight dispatches create', () => {
  it('queues a dispatch with every flag the request takes, and prints its id', async () => {
    const r = await create([
      ...['--subagent', 'web', '--repo', REPO, '--ref', 'main'],
      ...['--setup', 'sh', '--setup', '-c', '--setup', 'npm ci'],
      ...['--priority', '7', '--label', 'gpu', '--label', 'linux'],
      ...['--metadata', 'task=T-1', '--metadata', 'pr=12', '--deadline', '2h'],
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.stdout).toMatch(UUID)
    const view = (await request('GET', `/v1/dispatches/${r.stdout}`)).body
    expect(view).toMatchObject({
      status: 'queued',
      subagent: { name: 'web', version: 1 },
      workspace: { repo: REPO, ref: 'main', setup: ['sh', '-c', 'npm ci'] },
      priority: 7,
      labels: ['gpu', 'linux'],
      metadata: { task: 'T-1', pr: '12' },
    })
    // --deadline 2h: two hours from the coordinator's now
    const ahead = Date.parse(view.deadline) - Date.parse(view.createdAt)
    expect(Math.abs(ahead - 2 * 3_600_000)).toBeLessThan(5_000)
    await cancel(r.stdout)
  })

  it('takes a workspace path and a deadline as an instant, and prints JSON', async () => {
    const deadline = new Date(Date.now() + 3_600_000).toISOString()
    const r = await create([
      '--subagent',
      'api',
      '--path',
      '/srv/ws',
      '--deadline',
      deadline,
      '--format',
      'json',
    ])
    expect(r.exitCode).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out).toEqual({ id: expect.stringMatching(UUID), status: 'queued', created: true })
    const view = (await request('GET', `/v1/dispatches/${out.id}`)).body
    expect(view).toMatchObject({ workspace: { path: '/srv/ws' }, deadline })
    await cancel(out.id)
  })

  it('answers the same id for an idempotency key used again, and says so on stderr', async () => {
    const flags = ['--subagent', 'web', '--repo', REPO, '--idempotency-key', 'task-42']
    const first = await create(flags)
    const again = await create([...flags, '--format', 'json'])
    expect(again.exitCode).toBe(0)
    expect(JSON.parse(again.stdout)).toEqual({ id: first.stdout, status: 'queued', created: false })
    expect(again.stderr).toBe(
      `preflight: dispatch ${first.stdout} was created earlier with this idempotency key`,
    )
    await cancel(first.stdout)
  })

  it.each([
    [
      'a subagent not registered',
      ['--subagent', 'nobody', '--repo', REPO],
      /^preflight: the coordinator rejected the dispatch \(unknown-subagent: .*nobody/,
    ],
    [
      'an idempotency key used for another request',
      ['--subagent', 'api', '--repo', REPO, '--idempotency-key', 'task-42'],
      /^preflight: the coordinator rejected the dispatch \(idempotency-conflict: /,
    ],
  ])('refuses %s with the coordinator’s code: exit 2, one line', async (_what, args, says) => {
    const r = await create(args)
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(says)
    expect(r.stderr.split('\n')).toHaveLength(1)
  })

  it.each([
    ['no --subagent', ['--repo', REPO], '--subagent NAME is required'],
    ['no workspace', ['--subagent', 'web'], 'give the workspace: --repo URL, or --path DIR on the worker'],
    [
      'a relative --path',
      ['--subagent', 'web', '--path', 'ws'],
      '--path "ws" is not valid: workspace.path must be absolute',
    ],
    [
      'a priority out of bounds',
      ['--subagent', 'web', '--repo', REPO, '--priority', '101'],
      '--priority must be a whole number from -100 to 100, got "101"',
    ],
    [
      'a label it cannot hold',
      ['--subagent', 'web', '--repo', REPO, '--label', 'a b'],
      '--label "a b" is not valid: a label is 1-128 of letters, digits, "._:/=-"',
    ],
    [
      'a metadata pair without "="',
      ['--subagent', 'web', '--repo', REPO, '--metadata', 'task'],
      '--metadata "task" is not KEY=VALUE',
    ],
    [
      'a metadata key it cannot hold',
      ['--subagent', 'web', '--repo', REPO, '--metadata', 'a key=1'],
      '--metadata "a key" is not valid: a metadata key is 1-64 of letters, digits, "._-", starting with a letter or digit',
    ],
    [
      'a deadline too far ahead',
      ['--subagent', 'web', '--repo', REPO, '--deadline', '8d'],
      '--deadline must be a duration from 1ms to 7d, got "8d"',
    ],
    [
      'a deadline that is no instant',
      ['--subagent', 'web', '--repo', REPO, '--deadline', 'tomorrow'],
      '--deadline "tomorrow" is not valid: Invalid ISO datetime',
    ],
    [
      'a deadline in the past',
      ['--subagent', 'web', '--repo', REPO, '--deadline', '2020-01-01T00:00:00Z'],
      '--deadline "2020-01-01T00:00:00Z" is not valid: deadline is in the past',
    ],
  ])(
    'refuses %s before asking the coordinator: exit 2, one line naming the flag',
    async (_what, args, says) => {
      const r = await create(args, { PREFLIGHT_URL: 'http://127.0.0.1:9' })
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([2, '', `preflight: ${says}`])
    },
  )

  it('never prints a repository URL that holds a password', async () => {
    const r = await create(['--subagent', 'web', '--repo', 'https://me:hunter2@git.example.invalid/a.git'], {
      PREFLIGHT_URL: 'http://127.0.0.1:9',
    })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^preflight: --repo is not valid: /)
    expect(r.stderr).not.toContain('hunter2')
  })

  it('--wait: prints the id, waits for the end and prints the dispatch in full; exit 0 when it succeeded', async () => {
    const waiting = create(['--subagent', 'web', '--repo', REPO, '--wait'])
    await waitFor(() => watch.waiting === 1, { timeoutMs: 10_000, what: 'the wait to be parked' })
    const claim = (await request('POST', '/v1/worker/claim', { role: 'worker', body: { workerId: 'w1' } }))
      .body
    const { id } = claim.dispatch
    const fence = fenceOf(claim)
    const report = { ...fence, report: reportFor(definition('web')) }
    expect(
      (await request('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body: report })).status,
    ).toBe(200)
    const done = { ...fence, exitCode: 0 }
    expect(
      (await request('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body: done })).status,
    ).toBe(200)
    const r = await waiting
    expect(r.exitCode).toBe(0)
    const lines = r.stdout.split('\n')
    expect(lines[0]).toBe(id)
    expect(lines[1]).toMatch(new RegExp(`^dispatch ${id} {2}succeeded {2}web v1 `))
  })

  it('--wait: exit 1 when it ended otherwise', async () => {
    const waiting = create(['--subagent', 'web', '--repo', REPO, '--wait', '--format', 'json'])
    await waitFor(() => watch.waiting === 1, { timeoutMs: 10_000, what: 'the wait to be parked' })
    const listed = (await request('GET', '/v1/dispatches?status=queued')).body
    await cancel(listed.items[0].id)
    const r = await waiting
    expect(r.exitCode).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ id: listed.items[0].id, status: 'cancelled' })
  })
})
