// `preflight dispatches` against a coordinator served on an ephemeral port: the CLI in this process
// (test/support/cli.ts) for its flags, calls, output and exit codes, the binary spawned for a signal;
// the rendering is test/cli/dispatches-format.test.ts's.

import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/cli/errors.js'
import { execute } from '../../src/cli/main.js'
import { lastEventIds } from '../../src/coordinator/db/events.js'
import { Waker } from '../../src/coordinator/dispatch/waker.js'
import { DispatchWatch } from '../../src/coordinator/dispatch/watch.js'
import { colours } from '../../src/log/colour.js'
import { type TestApp, tokens } from '../support/app.js'
import { runCli } from '../support/cli.js'
import {
  type Driven,
  exited,
  preflightFailed,
  queued,
  running,
  setupFailed,
} from '../support/dispatch-states.js'
import { definition } from '../support/fixtures.js'
import { type Served, serveCoordinator } from '../support/served.js'
import { waitFor } from '../support/wait.js'

const BIN = fileURLToPath(new URL('../../bin/preflight.js', import.meta.url))

let s: Served
// the server's: `endings.waiting` tells when a watch is listening
const endings = new Waker()
// and `watch.waiting` when a wait is
let watch: DispatchWatch
// The server as the dispatch-state helpers drive it: over HTTP, with the database at hand.
let h: TestApp
const request: Served['request'] = (method, path, opts) => s.request(method, path, opts)
const d = {} as Record<'setup' | 'unmet' | 'failed' | 'running' | 'queued', Driven>

beforeAll(async () => {
  s = await serveCoordinator((t) => {
    watch = new DispatchWatch((ids) => lastEventIds(t.db.orm, ids), 1_000)
    return { config: { endingsSettleMs: 0 }, endings, watch }
  })
  h = { t: s.t, call: (method, path, opts) => request(method, path, opts) } as TestApp
  d.setup = await setupFailed(h, { def: definition('web'), detail: 'a\nb\nnpm ERR! missing script: build\n' })
  d.unmet = await preflightFailed(h, { def: definition('api'), workerId: 'w2' })
  d.failed = await exited(h, 3, { def: definition('web') })
  d.running = await running(h, { def: definition('web') })
  d.queued = { id: await queued(h, definition('web')), workerId: '' }
}, 60_000)

afterAll(() => s?.stop())

// In this process; `spawned` runs the real binary.
async function dispatches(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(['dispatches', ...args], {
    PREFLIGHT_COORDINATOR: undefined,
    PREFLIGHT_DEBUG: undefined,
    PREFLIGHT_URL: s.server.url,
    PREFLIGHT_TOKEN: tokens.operator,
    ...env,
  })
  // as execa gives them, without the last newline
  return { ...r, stdout: r.stdout.replace(/\n$/, ''), stderr: r.stderr.replace(/\n$/, '') }
}

function spawned(args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [BIN, 'dispatches', ...args], {
    reject: false,
    env: { PREFLIGHT_URL: s.server.url, PREFLIGHT_TOKEN: tokens.operator, ...env },
    extendEnv: false,
  })
}

describe('preflight dispatches list', () => {
  it('passes every filter to the coordinator and prints the items as JSON', async () => {
    const r = await dispatches([
      'list',
      '--status',
      'setup_failed',
      '--status',
      'failed',
      '--subagent',
      'web',
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stdout.match(/^\S+ {2}(failed|setup_failed) {2}web v1 /gm)).toHaveLength(2)
    expect(r.stdout).not.toMatch(/ {2}(running|queued|preflight_failed) {2}/)
    const byReason = await dispatches(['list', '--reason', 'not-found', '--worker', 'w2', '--format', 'json'])
    expect(JSON.parse(byReason.stdout).map((i: { id: string }) => i.id)).toEqual([d.unmet.id])
  })

  it('says in text why each ended, and stops at --limit', async () => {
    const r = await dispatches(['list', '--limit', '4'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout.match(/^\S+ {2}\w+ {2}\w+ v1 {2}dispatch /gm)).toHaveLength(4)
    expect(r.stdout).toContain('agent exited 3')
    expect(r.stdout).toContain('  unmet  exec git — not-found')
    expect(r.stdout).not.toContain('setup_failed')
  })

  it('paints the status words with FORCE_COLOR, not with NO_COLOR, and never in JSON', async () => {
    const args = ['list', '--status', 'setup_failed', '--limit', '1']
    const forced = await dispatches(args, { FORCE_COLOR: '1', NO_COLOR: '' })
    expect(forced.stdout).toContain(colours(true).red('setup_failed'))
    const not = await dispatches(args, { FORCE_COLOR: '1', NO_COLOR: '1' })
    expect(not.stdout).toMatch(/^\S+ {2}setup_failed {2}/)
    const json = await dispatches([...args, '--format', 'json'], { FORCE_COLOR: '1', NO_COLOR: '' })
    expect(JSON.parse(json.stdout)[0].status).toBe('setup_failed')
  })

  it('exits 2 with one sentence for a bad flag, before asking the coordinator', async () => {
    const r = await dispatches(['list', '--status', 'done'], { PREFLIGHT_URL: 'http://127.0.0.1:9' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr.trim().split('\n')).toEqual([
      'preflight: --status "done" is not valid: Invalid option: expected one of "queued"|"claimed"|"setup_failed"|"preflight_failed"|"running"|"succeeded"|"failed"|"expired"|"cancelled"',
    ])
  })
})

// The refusals before any output, by the error thrown: main() turns a UsageError into exit 2 and any
// other error into exit 1, one line each (the cases run with runCli here and in test/cli/reports.test.ts).
describe('preflight dispatches refuses', () => {
  const env = (token: string) => {
    process.env.PREFLIGHT_URL = s.server.url
    process.env.PREFLIGHT_TOKEN = token
  }
  afterAll(() => {
    delete process.env.PREFLIGHT_URL
    delete process.env.PREFLIGHT_TOKEN
  })

  it.each([
    ['an unknown status', ['list', '--status', 'done']],
    ['a limit of 0', ['list', '--limit', '0']],
    ['a since that is no instant', ['watch', '--since', 'yesterday']],
    [
      'a since after the until',
      ['list', '--since', '2026-02-02T00:00:00Z', '--until', '2026-02-01T00:00:00Z'],
    ],
    ['an unknown format', ['show', '00000000-0000-4000-8000-000000000000', '--format', 'xml']],
    ['an id that is no UUID', ['show', 'nope']],
    ['a cancel without an id', ['cancel']],
    ['an unknown command', ['purge']],
    ['no command', []],
  ])('%s as bad input', async (_what, args) => {
    env(tokens.operator)
    await expect(execute(['dispatches', ...args])).rejects.toBeInstanceOf(UsageError)
  })

  it('a token that may not list dispatches, with the coordinator’s 403', async () => {
    env(tokens.worker)
    await expect(execute(['dispatches', 'list'])).rejects.toMatchObject({ status: 403, code: 'forbidden' })
  })
})

describe('preflight dispatches show', () => {
  it('prints the events, the report, the setup output and the completion', async () => {
    const setup = await dispatches(['show', d.setup.id])
    expect(setup.exitCode).toBe(0)
    expect(setup.stdout).toMatch(/^ {2}\S+ {2}#1 {2}claimed {2}workerId w1$/m)
    expect(setup.stdout).toContain('completion: setup_failed, reason setup-exit, exit 1')
    expect(setup.stdout).toContain('  | npm ERR! missing script: build')
    const unmet = await dispatches(['show', d.unmet.id, '--format', 'json'])
    expect(JSON.parse(unmet.stdout)).toMatchObject({ id: d.unmet.id, preflight: { outcome: 'unmet' } })
  })

  it('takes the start of an id; none or several starting so is bad input, naming them', async () => {
    const short = await dispatches(['show', d.unmet.id.slice(0, 8), '--format', 'json'])
    expect(short.exitCode).toBe(0)
    expect(JSON.parse(short.stdout).id).toBe(d.unmet.id)
    // a second dispatch whose id starts as the failed one's: a copy of its row under another id
    const twin = `${d.failed.id.slice(0, 9)}ffff-4fff-8fff-ffffffffffff`
    await s.t.db.orm.execute(
      sql`INSERT INTO dispatches SELECT (jsonb_populate_record(null::dispatches,
            to_jsonb(x) || jsonb_build_object('id', ${twin}::text))).* FROM dispatches x WHERE id = ${d.failed.id}`,
    )
    const both = await dispatches(['show', d.failed.id.slice(0, 8)])
    expect(both.exitCode).toBe(2)
    expect(both.stderr).toContain(`"${d.failed.id.slice(0, 8)}" starts 2 dispatch ids (`)
    expect(both.stderr).toContain(twin)
    expect((await dispatches(['show', twin.slice(0, 13)])).exitCode).toBe(0)
    const none = await dispatches(['show', '0000-0000-00'])
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toContain('no dispatch id starts with "0000-0000-00"')
    for (const bad of ['abc', 'not-an-id', 'x'.repeat(8)]) {
      const r = await dispatches(['show', bad])
      expect(r.exitCode, bad).toBe(2)
      expect(r.stderr).toContain('is not a dispatch id (a UUID, or its first 4 or more hex digits)')
    }
  })

  it('exits 1 for a dispatch the coordinator does not know', async () => {
    const r = await dispatches(['show', '00000000-0000-4000-8000-000000000000'])
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toContain('not-found')
  })
})

describe('preflight dispatches cancel', () => {
  const orchestrator = { PREFLIGHT_TOKEN: tokens.orchestrator }

  it('cancels a queued dispatch and prints the answer', async () => {
    const r = await dispatches(['cancel', d.queued.id], orchestrator)
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe(`${d.queued.id}  cancelled`)
  })

  it("sends --why as the cancel's reason, kept with the dispatch", async () => {
    const r = await dispatches(['cancel', d.running.id, '--why', 'task abandoned'], orchestrator)
    expect(r.exitCode).toBe(0)
    const view = (await request('GET', `/v1/dispatches/${d.running.id}`)).body
    expect(view.cancel).toMatchObject({ reason: 'task abandoned', by: { role: 'orchestrator' } })
  })

  it('says in one line why a cancel was refused, and exits 1', async () => {
    const r = await dispatches(['cancel', d.failed.id], orchestrator)
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toEqual([
      `preflight: dispatch ${d.failed.id} was not cancelled: 409 (invalid-state: the dispatch has ended (failed) and cannot be cancelled)`,
    ])
  })
})

describe('preflight dispatches retry', () => {
  const orchestrator = { PREFLIGHT_TOKEN: tokens.orchestrator }

  it('queues an ended dispatch again and prints the new id; refuses one that has not ended (exit 1)', async () => {
    const r = await dispatches(
      ['retry', d.unmet.id.slice(0, 8), '--idempotency-key', 'cli-retry-1'],
      orchestrator,
    )
    expect(r.exitCode).toBe(0)
    const id = r.stdout.trim()
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(id).not.toBe(d.unmet.id)
    try {
      const view = (await request('GET', `/v1/dispatches/${id}`)).body
      expect(view).toMatchObject({ status: 'queued', subagent: { name: 'api' } })
      // the same key: the same new dispatch, not another
      const again = await dispatches(['retry', d.unmet.id, '--idempotency-key', 'cli-retry-1'], orchestrator)
      expect(again.stdout.trim()).toBe(id)
      const queuedOne = await dispatches(['retry', id], orchestrator)
      expect(queuedOne.exitCode).toBe(1)
      expect(queuedOne.stdout).toBe('')
      expect(queuedOne.stderr).toContain(`preflight: dispatch ${id} was not queued again: 409 (invalid-state`)
    } finally {
      // the suites below claim what is queued
      await request('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator', body: {} })
    }
  })
})

describe('preflight dispatches watch', () => {
  it('prints each failure as it happens, and not a success', async () => {
    const watch = dispatches(['watch', '--count', '1', '--format', 'json'])
    await waitFor(() => endings.waiting === 1, { timeoutMs: 10_000, what: 'the watch to wait' })
    await exited(h, 0)
    const failure = await setupFailed(h, { reason: 'clone-failed' })
    const r = await watch
    expect(r.exitCode).toBe(0)
    const lines = r.stdout.split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      id: failure.id,
      status: 'setup_failed',
      setup: { reason: 'clone-failed' },
    })
  })

  // a signal to a real process
  it('stops on SIGTERM with exit 0', async () => {
    const watch = spawned(['watch'])
    await waitFor(() => endings.waiting === 1, { timeoutMs: 10_000, what: 'the watch to wait' })
    watch.kill('SIGTERM')
    const r = await watch
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe('')
  })
})

describe('preflight dispatches list --metadata', () => {
  it('passes each pair as metadata.key=value: all must match', async () => {
    const a = await queued(h, definition('web'), { metadata: { task: 'T-7', team: 'web' } })
    const b = await queued(h, definition('web'), { metadata: { task: 'T-7', team: 'api' } })
    const r = await dispatches(['list', '--metadata', 'task=T-7', '--format', 'json'])
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout).map((i: { id: string }) => i.id)).toEqual([b, a])
    const both = await dispatches([
      'list',
      '--metadata',
      'task=T-7',
      '--metadata',
      'team=web',
      '--format',
      'json',
    ])
    expect(JSON.parse(both.stdout)).toMatchObject([{ id: a, metadata: { task: 'T-7', team: 'web' } }])
    const shown = await dispatches(['show', a])
    expect(shown.stdout).toContain('metadata task=T-7 team=web')
    // out of the way of the later tests' claims
    for (const id of [a, b]) await request('POST', `/v1/dispatches/${id}/cancel`)
  })

  it.each([
    ['no "="', ['--metadata', 'task']],
    ['a key it cannot hold', ['--metadata', 'task id=x']],
    ['a key twice', ['--metadata', 'task=a', '--metadata', 'task=b']],
  ])('exits 2 for a pair with %s, before asking the coordinator', async (_what, flags) => {
    const r = await dispatches(['list', ...flags], { PREFLIGHT_URL: 'http://127.0.0.1:9' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^preflight: --metadata /)
  })
})

describe('preflight dispatches wait', () => {
  it('prints the dispatch once it has ended: exit 0 for succeeded, 1 otherwise', async () => {
    const { id, fence } = await running(h, { def: definition('web') })
    const waiting = dispatches(['wait', id, '--format', 'json'])
    await waitFor(() => watch.waiting === 1, { timeoutMs: 10_000, what: 'the wait to be parked' })
    await request('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fence, exitCode: 0 },
    })
    const r = await waiting
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ id, status: 'succeeded' })
    expect((await dispatches(['wait', d.failed.id])).exitCode).toBe(1)
  })

  it('exits 3 with the dispatch as it stands after --timeout-ms', async () => {
    const id = await queued(h, definition('web'))
    const started = Date.now()
    const r = await dispatches(['wait', id, '--timeout-ms', '300', '--format', 'json'])
    expect(r.exitCode).toBe(3)
    expect(JSON.parse(r.stdout).status).toBe('queued')
    expect(Date.now() - started).toBeGreaterThanOrEqual(300)
    await request('POST', `/v1/dispatches/${id}/cancel`)
  })
})
