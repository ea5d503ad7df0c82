// The verify and report steps (worker/verify.ts): the requirements checked as the agent's uid, not the
// worker's; an unreadable claim reported, never checked; each step's event posted before it acts.
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ClaimResponse, ContextRequires, PreflightReport } from '../../src/contract/index.js'
import type { Api, DispatchFence } from '../../worker/api.js'
import { type Fenced, readClaim } from '../../worker/claim.js'
import { workerConfig } from '../../worker/config.js'
import type { AgentIdentity } from '../../worker/identity.js'
import { type Job, openJob } from '../../worker/job.js'
import { refusal, report, verify } from '../../worker/verify.js'
import { sharedDir, write } from '../support/checks.js'
import { workerClaim } from '../support/fixtures.js'
import { recordingLog } from '../support/log.js'
import { GIT } from '../support/worker-git.js'

// A uid no other test uses: it owns nothing here, so it reaches only what is open to every uid.
const AGENT = { uid: 61_990, gid: 61_990 }
const ANSWER = { decision: 'proceed', status: 'running' }

const opened: Job<Fenced>[] = []
afterEach(async () => {
  for (const job of opened.splice(0)) await job.close('succeeded')
})

// A job as the worker opens it for a claim, its coordinator a stand-in that records what it is sent. With
// `identity`, the job of a slot uid: its `identity` is what verify() must judge as. It is set on the opened
// job rather than given to openJob, whose close() would then sweep the uid and walk the whole file system
// for its leftovers (leftovers.test.ts), seconds for each test here.
function jobOf<C extends Fenced>(claim: C, identity?: AgentIdentity) {
  const events: { step: string; detail?: Record<string, unknown> }[] = []
  const reports: { fence: DispatchFence; report: PreflightReport }[] = []
  const api = {
    event: async (_fence: DispatchFence, step: string, detail?: Record<string, unknown>) => {
      events.push(detail === undefined ? { step } : { step, detail })
    },
    report: async (fence: DispatchFence, preflight: PreflightReport) => {
      reports.push({ fence, report: preflight })
      return ANSWER
    },
  } as unknown as Api
  const job = openJob(claim, {
    api,
    log: recordingLog().log,
    config: workerConfig({ git: GIT, workerId: 'w-verify', workdir: '/nowhere' }),
    env: { PATH: process.env.PATH ?? '' },
    signal: new AbortController().signal,
  })
  opened.push(job)
  return { job: identity ? { ...job, identity } : job, events, reports }
}

const requiring = (contextRequires: ContextRequires): ClaimResponse => {
  const claim = workerClaim()
  return { ...claim, subagent: { ...claim.subagent, contextRequires } }
}

describe('verify', () => {
  it("judges what the agent's uid may reach, not what the worker may read", async () => {
    const ws = sharedDir()
    write(ws, 'private/secret.txt')
    chmodSync(join(ws, 'private'), 0o700)
    const claim = requiring({ paths: ['private/secret.txt'] })

    const asAgent = await verify(jobOf(claim, AGENT).job, ws)
    expect(asAgent.outcome).toBe('unmet')
    expect(asAgent.results).toEqual([
      expect.objectContaining({
        kind: 'paths',
        requirement: 'private/secret.txt',
        status: 'unmet',
        reason: 'no-match',
        observed: { entriesScanned: 0, rejected: [{ path: 'private/secret.txt', why: 'unreachable' }] },
      }),
    ])
    // the same claim without a slot uid is judged as the worker, which reads the file
    const asWorker = await verify(jobOf(claim).job, ws)
    expect(asWorker).toMatchObject({ outcome: 'met', results: [{ status: 'met' }] })
  })

  it("posts its step first, then reports the verdict with the worker's details", async () => {
    const ws = sharedDir()
    write(ws, 'package.json')
    const { job, events } = jobOf(requiring({ paths: ['package.json'], exec: ['not-a-binary-anywhere'] }))
    const preflight = await verify(job, ws)
    expect(events).toEqual([{ step: 'verify' }])
    expect(preflight).toMatchObject({
      outcome: 'unmet',
      declared: true,
      results: [
        { kind: 'paths', requirement: 'package.json', status: 'met' },
        { kind: 'exec', requirement: 'not-a-binary-anywhere', status: 'unmet' },
      ],
      worker: { id: 'w-verify', node: process.version },
    })
    expect(preflight.worker).toEqual(job.workerInfo)
  })
})

describe('refusal', () => {
  it('reports every declared requirement of a claim that does not read as error invalid-claim, and why', async () => {
    const { subagent: _unread, ...rest } = workerClaim()
    const read = readClaim({ ...rest, subagent: { name: 's', contextRequires: { exec: ['git'] } } })
    if (read?.ok !== false) throw new Error('the fixture claim was expected not to read')
    const { job, events } = jobOf(read.claim)
    const problem = read.claim.problem
    const preflight = await refusal(job)
    expect(events).toEqual([{ step: 'verify', detail: { problem } }])
    expect(preflight).toEqual({
      outcome: 'error',
      declared: true,
      results: [
        {
          kind: 'exec',
          requirement: 'git',
          status: 'error',
          reason: 'invalid-claim',
          observed: { problem },
          durationMs: 0,
        },
      ],
      startedAt: expect.any(String),
      finishedAt: preflight.startedAt,
      worker: job.workerInfo,
    })
  })
})

describe('report', () => {
  it("posts its step with the outcome, sends the report under the job's fence and answers what came back", async () => {
    const { job, events, reports } = jobOf(workerClaim())
    const preflight: PreflightReport = {
      outcome: 'unmet',
      declared: true,
      results: [],
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
    }
    expect(await report(job, preflight)).toEqual(ANSWER)
    expect(events).toEqual([{ step: 'report', detail: { outcome: 'unmet' } }])
    expect(reports).toEqual([{ fence: job.fence, report: preflight }])
  })
})
