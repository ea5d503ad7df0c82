// The lease keeper: renews at a third of the remaining lease, gives the dispatch up on a 409 or when
// its last known expiry passes unrenewed, and is silent once stopped.
//
// The coordinator is a stand-in object with a `heartbeat` method: these tests need heartbeats that
// fail, hang or answer on cue, which the real coordinator does not do on demand. The e2e tests
// (lease-expiry, resilience) run the keeper against real HTTP and a real coordinator.
//
// Time is vitest's fake clock (timers and Date): each test advances it, so the keeper's timing is
// exact and the tests take no real time.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Api, CancelledError, LeaseLostError } from '../../worker/api.js'
import { keepLease, type LeaseKeeper } from '../../worker/lease.js'
import { recordingLog } from '../support/log.js'

const fence = { id: '00000000-0000-4000-8000-00000000000a', attempt: 1, leaseToken: 'lease' }
const LEASE_MS = 1_500
const inLease = () => new Date(Date.now() + LEASE_MS).toISOString()
// Runs every timer due within `ms` of fake time, settling the promises each one starts.
const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms)

let keeper: LeaseKeeper | undefined
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  keeper?.stop()
  vi.useRealTimers()
})

function keep(heartbeat: (signal?: AbortSignal) => Promise<unknown>, expiresAt = inLease()) {
  const calls: number[] = []
  const lost: number[] = []
  const cancelled: boolean[] = []
  const { log, warnings } = recordingLog()
  const started = Date.now()
  const api = {
    heartbeat: (_f: unknown, signal?: AbortSignal) => {
      calls.push(Date.now() - started)
      return heartbeat(signal)
    },
  } as unknown as Api
  keeper = keepLease(
    api,
    fence,
    expiresAt,
    (byCancel) => {
      lost.push(Date.now() - started)
      cancelled.push(byCancel)
    },
    log,
  )
  return { calls, lost, warnings, cancelled }
}

describe('keepLease', () => {
  it('renews the lease while the coordinator answers, and beats no more once stopped', async () => {
    const k = keep(async () => ({ status: 'running', lease: { token: 'lease', expiresAt: inLease() } }))
    await elapse(2 * LEASE_MS)
    expect(k.lost).toEqual([])
    expect(k.calls.length).toBeGreaterThanOrEqual(3)
    keeper?.stop()
    const beats = k.calls.length
    await elapse(LEASE_MS + 200)
    expect(k.calls.length).toBe(beats)
    expect(k.lost).toEqual([])
  })

  it('gives the dispatch up at once on 409 and beats no more', async () => {
    const k = keep(async () => {
      throw new LeaseLostError('POST heartbeat: 409 lease lost')
    })
    await elapse(2 * LEASE_MS)
    expect(k.calls).toHaveLength(1)
    // at the first beat, a third into the lease
    expect(k.lost).toEqual([LEASE_MS / 3])
  })

  it('says a 409 cancelled is a cancel, and a 409 lease-lost is not', async () => {
    const k = keep(async () => {
      throw new CancelledError('POST heartbeat: 409 the dispatch was cancelled')
    })
    await elapse(LEASE_MS)
    expect(k.cancelled).toEqual([true])
    expect(k.warnings).toEqual([])
    const other = keep(async () => {
      throw new LeaseLostError('POST heartbeat: 409 lease lost')
    })
    await elapse(LEASE_MS)
    expect(other.cancelled).toEqual([false])
  })

  it('beats at least every second however long the lease, so a cancel is learned within 2 s', async () => {
    const long = () => new Date(Date.now() + 60_000).toISOString()
    const k = keep(async () => ({ status: 'running', lease: { token: 'lease', expiresAt: long() } }), long())
    await elapse(5_000)
    expect(k.calls).toEqual([1_000, 2_000, 3_000, 4_000, 5_000])
  })

  it('keeps trying through failed heartbeats, and gives up when the lease expires unrenewed', async () => {
    const k = keep(async () => {
      throw new Error('connect ECONNREFUSED')
    })
    await elapse(2 * LEASE_MS)
    expect(k.lost).toHaveLength(1)
    // at the expiry it knew of, not before
    expect(k.lost).toEqual([LEASE_MS])
    expect(k.calls.length).toBeGreaterThanOrEqual(2)
    expect(k.warnings.some((w) => w.includes('heartbeat failed, will retry'))).toBe(true)
  })

  it('gives each hanging heartbeat up after one interval, tries again, and loses the lease at its expiry', async () => {
    let aborted = 0
    const k = keep(
      (signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            aborted++
            reject(signal.reason)
          })
        }),
    )
    await elapse(2 * LEASE_MS)
    expect(k.calls.length).toBeGreaterThanOrEqual(2)
    expect(aborted).toBe(k.calls.length)
    expect(k.lost).toEqual([LEASE_MS])
  })

  it('abandons the heartbeat in flight when stopped', async () => {
    let aborted: number | undefined
    let started: number | undefined
    keep(
      (signal) =>
        new Promise(() => {
          started = Date.now()
          signal?.addEventListener('abort', () => {
            aborted = Date.now()
          })
        }),
    )
    // the first beat is due at a third of the lease
    await elapse(LEASE_MS / 3)
    expect(started).toBeDefined()
    keeper?.stop()
    // at once: no time has passed on the clock
    expect(aborted).toBe(started)
  })

  it('keeps a lease that expires beyond what one timer can wait (~24.8 days)', async () => {
    const k = keep(() => new Promise(() => {}), new Date(Date.now() + 30 * 24 * 3_600_000).toISOString())
    await elapse(3_600_000)
    expect(k.lost).toEqual([])
  })

  it('takes each renewal as the new expiry', async () => {
    // The first renewal grants a long lease, later ones fail: the keeper must wait for the long one.
    let first = true
    const k = keep(async () => {
      if (!first) throw new Error('503')
      first = false
      return {
        status: 'running',
        lease: { token: 'lease', expiresAt: new Date(Date.now() + 3 * LEASE_MS).toISOString() },
      }
    })
    await elapse(2 * LEASE_MS)
    expect(k.lost).toEqual([])
    await elapse(2 * LEASE_MS)
    expect(k.lost).toHaveLength(1)
  })
})
