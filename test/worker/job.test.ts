import { getEventListeners } from 'node:events'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Api, LeaseLostError } from '../../worker/api.js'
import { workerConfig } from '../../worker/config.js'
import { type DispatchDeps, openJob } from '../../worker/job.js'
import { workerClaim } from '../support/fixtures.js'
import { recordingLog } from '../support/log.js'
import { GIT } from '../support/worker-git.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

function setup(leaseMs: number, extra: Partial<DispatchDeps> = {}) {
  const beats: number[] = []
  const { log, warnings } = recordingLog()
  const api = {
    heartbeat: async () => {
      beats.push(Date.now())
      throw new LeaseLostError('409')
    },
  } as unknown as Api
  const worker = new AbortController()
  const claim = workerClaim(leaseMs)
  const job = openJob(claim, {
    api,
    log,
    config: workerConfig({ git: GIT, workerId: 'w', workdir: '/nowhere' }),
    env: {},
    signal: worker.signal,
    ...extra,
  })
  return { job, worker, beats, warnings }
}

describe('openJob', () => {
  it("is aborted when the worker's signal is, and leaves no listener on it once closed", async () => {
    const a = setup(60_000)
    expect(getEventListeners(a.worker.signal, 'abort')).toHaveLength(1)
    a.worker.abort()
    expect(a.job.signal.aborted).toBe(true)
    await a.job.close('abandoned')

    const b = setup(60_000)
    await b.job.close('succeeded')
    expect(getEventListeners(b.worker.signal, 'abort')).toHaveLength(0)
    expect(b.job.signal.aborted).toBe(false)
  })

  it('is aborted when the lease is lost', async () => {
    const { job, warnings } = setup(900)
    // the first heartbeat, a third into the lease, is answered 409
    await vi.advanceTimersByTimeAsync(300)
    expect(job.signal.aborted).toBe(true)
    expect(warnings.some((w) => w.includes('lease lost'))).toBe(true)
    await job.close('abandoned')
  })

  it('lets the lease go before its slow releases run: no heartbeat, no "lease lost" while cleaning up', async () => {
    const { job, beats, warnings } = setup(900)
    job.onClose(() => sleep(1_000))
    const closing = job.close('succeeded')
    // the release outlasts the lease: any heartbeat still scheduled would be due in that time
    await vi.advanceTimersByTimeAsync(1_000)
    await closing
    expect(beats).toEqual([])
    expect(warnings).toEqual([])
  })

  it('observes how long each step took, the last one when the job closes', async () => {
    const took: [string, number][] = []
    const { job } = setup(60_000, { metrics: { stepTook: (step, seconds) => took.push([step, seconds]) } })
    await vi.advanceTimersByTimeAsync(1_000)
    job.enter('setup')
    await vi.advanceTimersByTimeAsync(2_000)
    job.enter('verify')
    await vi.advanceTimersByTimeAsync(500)
    await job.close('succeeded')
    expect(took.map(([step]) => step)).toEqual(['claim', 'setup', 'verify', 'cleanup'])
    expect(took.slice(0, 3).map(([, s]) => Math.round(s * 10) / 10)).toEqual([1, 2, 0.5])
  })
})

// A slot's next agent runs as the same uid: what this one left and the worker could not remove, it would
// find. So the slot claims no more (worker.ts stops it, with a log line and a metric).
describe.runIf(process.getuid?.() === 0)('closing the job of a slot uid', () => {
  const identity = { uid: 62_300, gid: 62_300 }

  it('takes the slot out of service when something of the dispatch could not be removed', async () => {
    vi.useRealTimers()
    const retired: string[] = []
    const { job } = setup(60_000, { identity, retire: (why) => retired.push(why) })
    job.onClose(() => {
      throw new Error('rm exited 1: cannot remove')
    })
    await job.close('succeeded')
    expect(retired).toEqual([expect.stringContaining('cannot remove')])
  })

  it('keeps the slot in service when everything was removed', async () => {
    vi.useRealTimers()
    const retired: string[] = []
    const { job } = setup(60_000, { identity, retire: (why) => retired.push(why) })
    job.onClose(() => {})
    await job.close('failed')
    expect(retired).toEqual([])
  })
})
