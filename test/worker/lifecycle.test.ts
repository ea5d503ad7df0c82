// The agent starts only on a stored report answered exactly `proceed`: any other answer (abort, a
// malformed body, no body) ends the dispatch as preflight_failed with no baseline, agent or completion.
// And only on a claim that reads: a definition or workspace the worker cannot parse is reported, never run.
//
// The coordinator is a stand-in HTTP server on loopback (the workspace, the checks and the agent are
// real): the real coordinator only ever answers `proceed` or `abort`, so only a stand-in can send the
// malformed answers a broken proxy or a version skew could.
import { randomUUID } from 'node:crypto'
import { getEventListeners } from 'node:events'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { PreflightReport } from '../../src/contract/index.js'
import { createApi } from '../../worker/api.js'
import { readClaim } from '../../worker/claim.js'
import { workerConfig } from '../../worker/config.js'
import { runDispatch } from '../../worker/lifecycle.js'
import { findGit } from '../../worker/run/git-env.js'
import { tempDir } from '../support/git-fixtures.js'
import { recordingLog } from '../support/log.js'

// `delayMs`: the answer comes that much later
type Answer = { status: number; body?: unknown; raw?: string; delayMs?: number }

let server: Server | undefined
const made: string[] = []

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true })
})

const COMPLETED: Answer = { status: 200, body: { status: 'succeeded' } }
const CANCELLED = {
  status: 409,
  body: { error: { code: 'cancelled', message: 'the dispatch was cancelled' } },
}

// Answers every worker route as the coordinator would, the preflight report with `answer` and the
// completion with `completion`; a heartbeat with 409 cancelled once `cancelWhen` holds.
async function standIn(answer: Answer | 'hang', completion = COMPLETED, cancelWhen = () => false) {
  const seen: { path: string; step?: string; detail?: unknown; report?: PreflightReport; body?: unknown }[] =
    []
  const reply = (res: ServerResponse, status: number, text?: string) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(text)
  }
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let text = ''
    for await (const chunk of req) text += chunk
    const path = req.url ?? ''
    const body = JSON.parse(text || '{}') as { step?: string; detail?: unknown; report?: PreflightReport }
    const { step, detail, report } = body
    const completes = path.endsWith('/complete') ? { body } : {}
    seen.push({ path, ...(step ? { step, detail } : {}), ...(report ? { report } : {}), ...completes })
    if (path.endsWith('/heartbeat')) {
      if (cancelWhen()) return reply(res, 409, JSON.stringify(CANCELLED.body))
      const expiresAt = new Date(Date.now() + 60_000).toISOString()
      return reply(res, 200, JSON.stringify({ status: 'running', lease: { token: 'lease', expiresAt } }))
    }
    if (path.endsWith('/events')) return reply(res, 200, JSON.stringify({ step, attempt: 1 }))
    if (path.endsWith('/preflight')) {
      if (answer === 'hang') return // never answered: the worker's request waits until it is aborted
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs))
      const text = answer.raw ?? (answer.body === undefined ? undefined : JSON.stringify(answer.body))
      return reply(res, answer.status, text)
    }
    if (path.endsWith('/complete')) return reply(res, completion.status, JSON.stringify(completion.body))
    reply(res, 404, JSON.stringify({ error: { code: 'not-found', message: path } }))
  }
  server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, seen }
}

type Subagent = Record<string, unknown>

async function dispatchWith(
  answer: Answer | 'hang',
  completion = COMPLETED,
  worker = new AbortController(),
  subagent: (marker: string) => Subagent = (marker) => ({
    name: 'decision',
    agent: { command: ['sh', '-c', `touch ${JSON.stringify(marker)}`] },
    contextRequires: { exec: ['sh'] },
  }),
  workspaceOf: (dir: string) => Record<string, unknown> = (dir) => ({ path: dir }),
  dispatchExtra: Record<string, unknown> = {},
  cancelWhen?: (marker: string) => boolean,
) {
  const marked = (dir: string) => join(dir, 'agent-ran')
  const { url, seen } = await standIn(answer, completion, () => cancelWhen?.(marked(workspace)) ?? false)
  const workspace = await tempDir('preflight-decision-ws-')
  const workdir = await tempDir('preflight-decision-work-')
  made.push(workspace, workdir)
  const marker = marked(workspace)
  const { log, warnings, records } = recordingLog()
  const claim = {
    dispatch: {
      id: randomUUID(),
      attempt: 1,
      workspace: workspaceOf(workspace),
      subagent: { name: 'decision', version: 1 },
      ...dispatchExtra,
    },
    subagent: subagent(marker),
    lease: { token: 'lease', expiresAt: new Date(Date.now() + 60_000).toISOString() },
  }
  const read = readClaim(claim)
  if (!read) throw new Error('the fixture claim has no fence')
  const ending = await runDispatch(read, {
    api: createApi({ url, token: 'worker-token', retry: { budgetMs: 2_000, baseMs: 5, maxDelayMs: 20 } }),
    log,
    config: workerConfig({
      git: findGit(process.env.PATH, []),
      workerId: 'w-decision',
      workdir,
      roots: [workspace],
    }),
    env: process.env,
    signal: worker.signal,
  })
  return {
    ending,
    agentRan: existsSync(marker),
    steps: seen.flatMap((s) => (s.step ? [s.step] : [])),
    completions: seen.filter((s) => s.path.endsWith('/complete')).length,
    completed: seen.flatMap((s) => (s.path.endsWith('/complete') ? [s.body] : [])),
    faults: seen.filter((s) => s.step === 'fault').map((s) => s.detail),
    warnings,
    records,
    id: claim.dispatch.id,
    reports: seen.flatMap((s) => (s.report ? [s.report] : [])),
    // what is still listening on the worker's signal once the dispatch has ended
    listeners: getEventListeners(worker.signal, 'abort').length,
  }
}

describe('the decision that starts the agent', () => {
  it('starts the agent on proceed (the control), and leaves nothing on the worker when it ends', async () => {
    const run = await dispatchWith({ status: 200, body: { decision: 'proceed', status: 'running' } })
    expect(run).toMatchObject({
      ending: 'succeeded',
      agentRan: true,
      steps: ['prepare', 'setup', 'verify', 'report', 'baseline', 'agent'],
      completions: 1,
      faults: [],
      warnings: [],
      listeners: 0,
    })
  })

  const PROCEED: Answer = { status: 200, body: { decision: 'proceed', status: 'running' } }

  it('never gets to verify, let alone the agent, when the workspace cannot be prepared', async () => {
    const run = await dispatchWith(PROCEED, COMPLETED, new AbortController(), undefined, () => ({
      path: '/not-a-root/of-this-worker',
    }))
    expect(run).toMatchObject({ ending: 'setup_failed', agentRan: false, steps: ['prepare', 'setup-failed'] })
  })

  it('never gets to verify, let alone the agent, when setup fails', async () => {
    const run = await dispatchWith(PROCEED, COMPLETED, new AbortController(), undefined, (dir) => ({
      path: dir,
      setup: ['sh', '-c', 'exit 3'],
    }))
    expect(run).toMatchObject({
      ending: 'setup_failed',
      agentRan: false,
      steps: ['prepare', 'setup', 'setup-failed'],
      reports: [],
      // the exit code as a field of its own, not only in the detail's text
      completed: [expect.objectContaining({ status: 'setup_failed', exitCode: 3 })],
    })
  })

  // A 409 is another attempt's lease: after it nothing more is written, not even a fault.
  it('writes nothing more, not even a fault, once the report is answered with a lost lease', async () => {
    const lost = { status: 409, body: { error: { code: 'lease-lost', message: 'superseded' } } }
    const run = await dispatchWith(lost)
    expect(run).toMatchObject({
      ending: 'abandoned',
      agentRan: false,
      steps: ['prepare', 'setup', 'verify', 'report'],
      completions: 0,
      faults: [],
      warnings: [],
    })
  })

  // A 409 cancelled: the dispatch was cancelled. The agent does not start; what it had is written.
  it('never starts the agent once the report is answered cancelled, and writes what it had', async () => {
    const cancelled = {
      status: 409,
      body: { error: { code: 'cancelled', message: 'the dispatch was cancelled' } },
    }
    const run = await dispatchWith(cancelled)
    expect(run).toMatchObject({
      ending: 'cancelled',
      agentRan: false,
      steps: ['prepare', 'setup', 'verify', 'report'],
      completed: [{ attempt: 1, leaseToken: 'lease', status: 'cancelled' }],
      faults: [],
      warnings: [],
    })
  })

  it('ends cancelled when its completion is answered so (a cancel that won the race)', async () => {
    const run = await dispatchWith(PROCEED, { status: 200, body: { id: randomUUID(), status: 'cancelled' } })
    expect(run).toMatchObject({ ending: 'cancelled', agentRan: true, completions: 1, faults: [] })
  })

  // A 409 cancelled to the completion itself: the cancel came after the program ended. What the
  // dispatch had (the exit and the output's tail) is written with the cancel all the same.
  it("keeps the agent's exit and output when its completion is answered cancelled", async () => {
    const run = await dispatchWith(PROCEED, CANCELLED, undefined, () => ({
      name: 'decision',
      agent: { command: ['sh', '-c', 'echo last words; exit 3'] },
    }))
    expect(run.ending).toBe('cancelled')
    expect(run.completed.at(-1)).toMatchObject({ status: 'cancelled', exitCode: 3, detail: 'last words' })
  })

  // A heartbeat answered cancelled while the agent runs: the agent is stopped, and the cancel writes
  // the output it had (the agent step's Abandoned carries it to the lifecycle).
  it("keeps a stopped agent's output when a heartbeat says the dispatch was cancelled", async () => {
    const run = await dispatchWith(
      PROCEED,
      COMPLETED,
      undefined,
      (marker) => ({
        name: 'decision',
        agent: { command: ['sh', '-c', `echo still working; touch ${JSON.stringify(marker)}; sleep 30`] },
      }),
      undefined,
      {},
      existsSync,
    )
    expect(run).toMatchObject({ ending: 'cancelled', agentRan: true })
    expect(run.completed.at(-1)).toMatchObject({ status: 'cancelled', detail: 'still working' })
  }, 20_000)

  it("keeps setup's output when its setup failure is answered cancelled", async () => {
    const run = await dispatchWith(PROCEED, CANCELLED, undefined, undefined, (dir) => ({
      path: dir,
      setup: ['sh', '-c', 'echo setup words; exit 4'],
    }))
    expect(run).toMatchObject({ ending: 'cancelled', agentRan: false })
    expect(run.completed.at(-1)).toMatchObject({ status: 'cancelled', detail: 'setup words' })
  })

  it('never starts the agent past the deadline: failed, reason deadline, exit 124', async () => {
    // the report is answered after the deadline: the agent's turn comes too late
    const deadline = new Date(Date.now() + 200).toISOString()
    const run = await dispatchWith(
      { ...PROCEED, delayMs: 400 },
      COMPLETED,
      new AbortController(),
      undefined,
      undefined,
      { deadline },
    )
    expect(run).toMatchObject({
      ending: 'failed',
      agentRan: false,
      completed: [{ exitCode: 124, reason: 'deadline', durationMs: 0 }],
    })
    expect(run.steps).toEqual(['prepare', 'setup', 'verify', 'report', 'baseline', 'agent-timeout'])
  })

  it('ends setup at the deadline as setup_failed, reason deadline', async () => {
    const deadline = new Date(Date.now() + 500).toISOString()
    const run = await dispatchWith(
      PROCEED,
      COMPLETED,
      new AbortController(),
      undefined,
      (dir) => ({ path: dir, setup: ['sh', '-c', 'sleep 30'] }),
      { deadline },
    )
    expect(run).toMatchObject({
      ending: 'setup_failed',
      agentRan: false,
      completed: [{ status: 'setup_failed', reason: 'deadline' }],
    })
  })

  it('stops the agent at the deadline when it comes before the worker ceiling', async () => {
    const deadline = new Date(Date.now() + 1_500).toISOString()
    const run = await dispatchWith(
      PROCEED,
      COMPLETED,
      new AbortController(),
      () => ({ name: 'decision', agent: { command: ['sh', '-c', 'sleep 30'] } }),
      undefined,
      { deadline },
    )
    expect(run).toMatchObject({ ending: 'failed', completed: [{ exitCode: 143, reason: 'deadline' }] })
  })

  it('takes a write cut short by shutdown as a stop, not a fault: no fault event, no warning', async () => {
    const worker = new AbortController()
    setTimeout(() => worker.abort(), 500)
    const run = await dispatchWith('hang', COMPLETED, worker)
    expect(run).toMatchObject({ ending: 'abandoned', agentRan: false, faults: [], warnings: [] })
    // said once, at info, with the step it was stopped in
    expect(run.records.filter((r) => r.msg === 'abandoned')).toEqual([
      {
        level: 'info',
        msg: 'abandoned',
        fields: expect.objectContaining({ step: 'report', why: expect.any(String) }),
      },
    ])
  })

  it('posts a fault the coordinator refused as a `fault` event, then leaves the lease to lapse', async () => {
    const refused = { status: 400, body: { error: { code: 'invalid-request', message: 'no such field' } } }
    const run = await dispatchWith({ status: 200, body: { decision: 'proceed', status: 'running' } }, refused)
    expect(run).toMatchObject({
      ending: 'abandoned',
      steps: ['prepare', 'setup', 'verify', 'report', 'baseline', 'agent', 'fault'],
      completions: 1,
    })
    expect(run.faults).toEqual([{ message: expect.stringContaining('400 no such field') }])
  })

  const refusals: [string, Answer][] = [
    ['abort', { status: 200, body: { decision: 'abort', status: 'preflight_failed' } }],
    ['a differently spelled decision', { status: 200, body: { decision: 'Proceed', status: 'running' } }],
    ['a decision that is not a string', { status: 200, body: { decision: ['proceed'] } }],
    ['an object without a decision', { status: 200, body: { status: 'running' } }],
    ['a bare JSON string', { status: 200, body: 'proceed' }],
    ['a body that is not JSON', { status: 200, raw: 'proceed' }],
    ['no body (204)', { status: 204 }],
  ]
  it.each(refusals)('does not start the agent on %s', async (_name, answer) => {
    const run = await dispatchWith(answer)
    expect(run).toMatchObject({
      ending: 'preflight_failed',
      agentRan: false,
      steps: ['prepare', 'setup', 'verify', 'report'],
      completions: 0,
      faults: [],
      warnings: [],
    })
  })
})

// A coordinator of another version (or a broken proxy) may hand out a definition this worker cannot read. It
// must not run, and its requirements must not read as met, even when the coordinator answers proceed.
describe('a claim whose definition does not read', () => {
  const PROCEED: Answer = { status: 200, body: { decision: 'proceed', status: 'running' } }
  const definitions: [string, (marker: string) => Subagent, [string, string][]][] = [
    [
      'git that is not an object',
      (marker) => ({
        name: 'decision',
        agent: { command: ['touch', marker] },
        contextRequires: { git: true },
      }),
      [['git', 'true']],
    ],
    [
      'a kind this worker does not know',
      (marker) => ({
        name: 'decision',
        agent: { command: ['touch', marker] },
        contextRequires: { exec: ['sh'], nix: true },
      }),
      [
        ['exec', 'sh'],
        ['nix', 'true'],
      ],
    ],
    [
      'an agent without a command',
      () => ({ name: 'decision', agent: {}, contextRequires: { paths: ['a'], git: { worktree: true } } }),
      [
        ['paths', 'a'],
        ['git', 'worktree'],
      ],
    ],
    [
      'contextRequires that is not an object',
      () => ({ name: 'decision', agent: {}, contextRequires: 'x' }),
      [],
    ],
  ]

  it.each(definitions)(
    'reports %s as error for every requirement and never starts anything',
    async (_n, def, rows) => {
      const run = await dispatchWith(PROCEED, COMPLETED, new AbortController(), def)
      expect(run).toMatchObject({ ending: 'preflight_failed', agentRan: false, completions: 0, faults: [] })
      expect(run.steps).toEqual(['verify', 'report'])
      expect(run.reports).toHaveLength(1)
      const [report] = run.reports
      expect(report?.outcome).toBe('error')
      expect(report?.declared).toBe(rows.length > 0)
      expect(report?.results.map((r) => [r.kind, r.requirement])).toEqual(rows)
      for (const result of report?.results ?? []) {
        expect(result).toMatchObject({
          status: 'error',
          reason: 'invalid-claim',
          observed: { problem: expect.any(String) },
        })
      }
    },
  )
})

describe("the dispatch's log", () => {
  it("carries the dispatch's id, attempt and step on every record, and on setup's and the agent's output", async () => {
    const run = await dispatchWith(
      { status: 200, body: { decision: 'proceed', status: 'running' } },
      COMPLETED,
      new AbortController(),
      () => ({ name: 'decision', agent: { command: ['sh', '-c', 'echo agent-line'] } }),
      (dir) => ({ path: dir, setup: ['sh', '-c', 'echo setup-line'] }),
    )
    expect(run.ending).toBe('succeeded')
    expect(run.records.length).toBeGreaterThan(0)
    for (const record of run.records) {
      expect(record.fields).toMatchObject({ dispatchId: run.id, attempt: 1, step: expect.any(String) })
    }
    expect(run.records.filter((r) => r.level === 'output').map((r) => [r.msg, r.fields.step])).toEqual([
      ['setup-line', 'setup'],
      ['agent-line', 'agent'],
    ])
  })
})
