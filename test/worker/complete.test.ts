// The agent's completion as the worker sends it: its exit with the tail of its output, and, to a
// coordinator older than that tail, the exit without it. The coordinator is a stand-in object.
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentExit, MAX_DETAIL_CHARS } from '../../src/contract/index.js'
import { type Api, ApiError, LeaseLostError } from '../../worker/api.js'
import { complete } from '../../worker/complete.js'
import { workerConfig } from '../../worker/config.js'
import { type Job, type NextClaim, type NextRequest, openJob } from '../../worker/job.js'
import { workerClaim } from '../support/fixtures.js'
import { recordingLog } from '../support/log.js'
import { GIT } from '../support/worker-git.js'

const opened: Job[] = []
afterEach(async () => {
  for (const job of opened.splice(0)) await job.close('failed')
})

// A job whose coordinator answers each completion with `answer` (a throw is a refusal).
function jobAnswering(answer: (exit: AgentExit) => unknown, next?: NextClaim) {
  const sent: AgentExit[] = []
  const api = {
    complete: async (_fence: unknown, exit: AgentExit) => {
      sent.push(exit)
      return answer(exit)
    },
  } as unknown as Api
  const claim = workerClaim()
  const { log, records } = recordingLog()
  const job = openJob(claim, {
    api,
    log,
    config: workerConfig({ git: GIT, workerId: 'w', workdir: '/nowhere' }),
    env: {},
    signal: new AbortController().signal,
    ...(next ? { next } : {}),
  })
  opened.push(job)
  return { job, sent, records }
}

// A slot's side of `next` that asks for `asking` and records what it is told.
function recordingNext(asking: NextRequest | undefined) {
  const told: string[] = []
  const next: NextClaim = {
    ask: () => asking,
    handed: (claim) => told.push(`handed ${JSON.stringify(claim)}`),
    refused: () => told.push('refused'),
  }
  return { next, told }
}

const failed = (exit: AgentExit) => ({
  id: randomUUID(),
  status: exit.exitCode === 0 ? 'succeeded' : 'failed',
})
const refused = () => {
  throw new ApiError(400, 'invalid-request', 'an agent exit carries no detail, and no reason but "deadline"')
}

describe('complete', () => {
  it("sends the agent's output tail as the completion's detail", async () => {
    const { job, sent } = jobAnswering(failed)
    const run = { exitCode: 3, durationMs: 40, tail: 'to stdout\npanic' }
    expect(await complete(job, run, undefined)).toBe('failed')
    expect(sent).toEqual([{ exitCode: 3, durationMs: 40, detail: 'to stdout\npanic' }])
  })

  it('keeps the last MAX_DETAIL_CHARS characters of a longer tail, and sends no detail without one', async () => {
    const { job, sent } = jobAnswering(failed)
    const tail = `first${'x'.repeat(MAX_DETAIL_CHARS - 4)}last`
    await complete(job, { exitCode: 0, durationMs: 1, tail }, undefined)
    await complete(job, { exitCode: 124, durationMs: 0, reason: 'deadline' }, undefined)
    expect(sent[0]?.detail).toBe(`${'x'.repeat(MAX_DETAIL_CHARS - 4)}last`)
    expect(sent[1]).toEqual({ exitCode: 124, durationMs: 0, reason: 'deadline' })
  })

  it('sends the exit again without its tail to a coordinator that refuses the tail', async () => {
    const { job, sent } = jobAnswering((exit) => (exit.detail === undefined ? failed(exit) : refused()))
    expect(await complete(job, { exitCode: 3, durationMs: 40, tail: 'panic' }, undefined)).toBe('failed')
    expect(sent).toEqual([
      { exitCode: 3, durationMs: 40, detail: 'panic' },
      { exitCode: 3, durationMs: 40 },
    ])
  })

  it('sends the exit again without its observation, keeping its tail, when the coordinator refuses it as too much', async () => {
    const tooMuch = () => {
      throw new ApiError(413, 'payload-too-large', 'the body is over 1 MiB')
    }
    const { job, sent } = jobAnswering((exit) => (exit.observed === undefined ? failed(exit) : tooMuch()))
    const observed = { source: 'trace' as const, exec: [{ name: 'pnpm' }], paths: [] }
    const undeclared = [{ kind: 'exec' as const, name: 'pnpm', state: 'missing' as const }]
    job.observation = { record: () => ({ observed, undeclared }) } as unknown as NonNullable<
      Job['observation']
    >
    expect(await complete(job, { exitCode: 127, durationMs: 40, tail: 'pnpm: not found' }, undefined)).toBe(
      'failed',
    )
    expect(sent).toEqual([
      { exitCode: 127, durationMs: 40, detail: 'pnpm: not found', observed, undeclared },
      { exitCode: 127, durationMs: 40, detail: 'pnpm: not found' },
    ])
  })

  it('asks for the next dispatch when the slot takes one, and hands the claim it was answered with over', async () => {
    const { next, told } = recordingNext({ workerId: 'w', labels: ['gpu'] })
    const { job, sent } = jobAnswering((exit) => ({ ...failed(exit), next: { claimed: 'x' } }), next)
    expect(await complete(job, { exitCode: 0, durationMs: 1 }, undefined)).toBe('succeeded')
    expect(sent).toEqual([{ exitCode: 0, durationMs: 1, next: { workerId: 'w', labels: ['gpu'] } }])
    expect(told).toEqual(['handed {"claimed":"x"}'])
  })

  it('says what it sent again without: the observation of an exit that has no tail', async () => {
    const { job, sent, records } = jobAnswering((exit) => {
      if (exit.observed === undefined) return failed(exit)
      throw new ApiError(413, 'payload-too-large', 'the body is over 1 MiB')
    })
    const observed = { source: 'trace' as const, exec: [], paths: [] }
    job.observation = { record: () => ({ observed }) } as unknown as NonNullable<Job['observation']>
    await complete(job, { exitCode: 0, durationMs: 1 }, undefined)
    expect(sent).toEqual([
      { exitCode: 0, durationMs: 1, observed },
      { exitCode: 0, durationMs: 1 },
    ])
    const told = records.find((r) => r.msg.startsWith('the coordinator refused the completion'))
    expect(told?.fields).toMatchObject({ without: 'the observation' })
  })

  it('sends the exit again without next, keeping its tail, to a coordinator from before next', async () => {
    const { next, told } = recordingNext({ workerId: 'w' })
    const { job, sent } = jobAnswering((exit) => {
      if ('next' in exit) throw new ApiError(400, 'invalid-request', 'json: Unrecognized key: "next"')
      return failed(exit)
    }, next)
    expect(await complete(job, { exitCode: 0, durationMs: 1, tail: 'ok' }, undefined)).toBe('succeeded')
    expect(sent).toEqual([
      { exitCode: 0, durationMs: 1, detail: 'ok', next: { workerId: 'w' } },
      { exitCode: 0, durationMs: 1, detail: 'ok' },
    ])
    // no slot asks again
    expect(told).toEqual(['refused'])
  })

  it('keeps asking after a refusal next did not cause, and after a failure that may be retried', async () => {
    for (const error of [
      new ApiError(413, 'payload-too-large', 'the body is over 1 MiB'),
      new ApiError(503, 'unavailable', 'the database is unavailable'),
    ]) {
      const { next, told } = recordingNext({ workerId: 'w' })
      const { job, sent } = jobAnswering((exit) => {
        if ('next' in exit) throw error
        return failed(exit)
      }, next)
      expect(await complete(job, { exitCode: 0, durationMs: 1 }, undefined)).toBe('succeeded')
      // one try with next, then the completion alone
      expect(sent).toEqual([
        { exitCode: 0, durationMs: 1, next: { workerId: 'w' } },
        { exitCode: 0, durationMs: 1 },
      ])
      expect(told).toEqual([])
    }
  })

  it('is not stopped by the job: a heartbeat answered 409 once the completion is stored aborts the job, not the completion', async () => {
    let stillGoing: boolean | undefined
    const { job } = jobAnswering((exit) => {
      // what the lease keeper does on a 409: the job's signal aborted while the completion is in flight
      job.cancel()
      return failed(exit)
    })
    const api = job.deps.api
    const complete0 = api.complete
    api.complete = (f, body, signal, once) => {
      const answer = complete0(f, body, signal, once)
      stillGoing = signal !== undefined && !signal.aborted && job.signal.aborted
      return answer
    }
    await complete(job, { exitCode: 0, durationMs: 1 }, undefined)
    expect(stillGoing).toBe(true)
  })

  it('takes no claim it did not ask for', async () => {
    const { next, told } = recordingNext(undefined)
    const { job, sent } = jobAnswering((exit) => ({ ...failed(exit), next: { claimed: 'x' } }), next)
    expect(await complete(job, { exitCode: 0, durationMs: 1 }, undefined)).toBe('succeeded')
    expect(sent).toEqual([{ exitCode: 0, durationMs: 1 }])
    expect(told).toEqual([])
  })

  it('sends nothing again for a refusal a tail did not cause', async () => {
    const lost = jobAnswering(() => {
      throw new LeaseLostError('superseded')
    })
    await expect(
      complete(lost.job, { exitCode: 3, durationMs: 40, tail: 'panic' }, undefined),
    ).rejects.toThrow(LeaseLostError)
    expect(lost.sent).toHaveLength(1)
    const bare = jobAnswering(refused)
    await expect(complete(bare.job, { exitCode: 3, durationMs: 40 }, undefined)).rejects.toThrow(ApiError)
    expect(bare.sent).toHaveLength(1)
  })
})
