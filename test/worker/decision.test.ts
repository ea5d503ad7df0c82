// The agent starts only on a stored report answered exactly `proceed`: any other answer (abort, a
// malformed body, no body) ends the dispatch as preflight_failed with no baseline, agent or completion.
//
// The coordinator is a stand-in HTTP server on loopback (the workspace, the checks and the agent are
// real): the real coordinator only ever answers `proceed` or `abort`, so only a stand-in can send the
// malformed answers a broken proxy or a version skew could.
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createApi } from '../../worker/api.js'
import { runDispatch } from '../../worker/lifecycle.js'
import { GIT, tempDir } from './git-fixtures.js'

type Answer = { status: number; body?: unknown; raw?: string }

let server: Server | undefined
const made: string[] = []

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true })
})

const COMPLETED: Answer = { status: 200, body: { status: 'succeeded' } }

// Answers every worker route as the coordinator would, the preflight report with `answer` and the
// completion with `completion`.
async function standIn(answer: Answer | 'hang', completion = COMPLETED) {
  const seen: { path: string; step?: string; detail?: unknown }[] = []
  const reply = (res: ServerResponse, status: number, text?: string) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(text)
  }
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let text = ''
    for await (const chunk of req) text += chunk
    const path = req.url ?? ''
    const { step, detail } = JSON.parse(text || '{}') as { step?: string; detail?: unknown }
    seen.push({ path, ...(step ? { step, detail } : {}) })
    if (path.endsWith('/heartbeat')) {
      const expiresAt = new Date(Date.now() + 60_000).toISOString()
      return reply(res, 200, JSON.stringify({ status: 'running', lease: { token: 'lease', expiresAt } }))
    }
    if (path.endsWith('/events')) return reply(res, 200, JSON.stringify({ step, attempt: 1 }))
    if (path.endsWith('/preflight')) {
      if (answer === 'hang') return // never answered: the worker's request waits until it is aborted
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

async function dispatchWith(answer: Answer | 'hang', completion = COMPLETED, worker = new AbortController()) {
  const { url, seen } = await standIn(answer, completion)
  const workspace = await tempDir('preflight-decision-ws-')
  const workdir = await tempDir('preflight-decision-work-')
  made.push(workspace, workdir)
  const marker = join(workspace, 'agent-ran')
  const warnings: string[] = []
  const claim = {
    dispatch: {
      id: randomUUID(),
      attempt: 1,
      workspace: { path: workspace },
      subagent: { name: 'decision', version: 1 },
    },
    subagent: {
      name: 'decision',
      agent: { command: ['sh', '-c', `touch ${JSON.stringify(marker)}`] },
      contextRequires: { exec: ['sh'] },
    },
    lease: { token: 'lease', expiresAt: new Date(Date.now() + 60_000).toISOString() },
  }
  const ending = await runDispatch(claim, {
    api: createApi({ url, token: 'worker-token', retry: { budgetMs: 2_000, baseMs: 5, maxDelayMs: 20 } }),
    log: { info: () => {}, warn: (m) => void warnings.push(m), output: () => {} },
    config: { git: GIT, workerId: 'w-decision', workdir, roots: [workspace], passEnv: [], keepFailed: false },
    env: process.env,
    signal: worker.signal,
  })
  return {
    ending,
    agentRan: existsSync(marker),
    steps: seen.flatMap((s) => (s.step ? [s.step] : [])),
    completions: seen.filter((s) => s.path.endsWith('/complete')).length,
    faults: seen.filter((s) => s.step === 'fault').map((s) => s.detail),
    warnings,
  }
}

describe('the decision that starts the agent', () => {
  it('starts the agent on proceed (the control)', async () => {
    const run = await dispatchWith({ status: 200, body: { decision: 'proceed', status: 'running' } })
    expect(run).toEqual({
      ending: 'succeeded',
      agentRan: true,
      steps: ['prepare', 'setup', 'verify', 'report', 'baseline', 'agent'],
      completions: 1,
      faults: [],
      warnings: [],
    })
  })

  it('takes a write cut short by shutdown as a stop, not a fault: no fault event, no warning', async () => {
    const worker = new AbortController()
    setTimeout(() => worker.abort(), 500)
    const run = await dispatchWith('hang', COMPLETED, worker)
    expect(run).toMatchObject({ ending: 'abandoned', agentRan: false, faults: [], warnings: [] })
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
    expect(run).toEqual({
      ending: 'preflight_failed',
      agentRan: false,
      steps: ['prepare', 'setup', 'verify', 'report'],
      completions: 0,
      faults: [],
      warnings: [],
    })
  })
})
