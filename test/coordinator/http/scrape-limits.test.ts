// reusedFor and paced: what keeps GET /metrics cheap under a flood of scrapers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_WAIT_MS, paced, reusedFor } from '../../../src/coordinator/http/scrape-limits.js'

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-06-01T00:00:00Z') })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('reusedFor', () => {
  it('builds once for concurrent callers and reuses the result for ms', async () => {
    let builds = 0
    const get = reusedFor(5_000, async () => ++builds)
    expect(await Promise.all([get(), get(), get()])).toEqual([1, 1, 1])
    vi.advanceTimersByTime(4_999)
    expect(await get()).toBe(1)
    expect(builds).toBe(1)
  })

  it('answers the last result while it rebuilds, then the new one', async () => {
    let builds = 0
    const get = reusedFor(5_000, async () => ++builds)
    await get()
    vi.advanceTimersByTime(5_000)
    expect(await get()).toBe(1)
    expect(await get()).toBe(2)
  })

  it('builds on every call with ms 0', async () => {
    let builds = 0
    const get = reusedFor(0, async () => ++builds)
    expect(await get()).toBe(1)
    expect(await get()).toBe(2)
  })
})

describe('paced', () => {
  it('gives turns evenly spaced, at most perSecond a second', async () => {
    const turn = paced(100)
    const at: number[] = []
    const start = Date.now()
    const turns = Array.from({ length: 5 }, () => turn().then(() => at.push(Date.now() - start)))
    await vi.advanceTimersByTimeAsync(100)
    await Promise.all(turns)
    expect(at).toEqual([0, 10, 20, 30, 40])
  })

  it('refuses at once a turn more than MAX_WAIT_MS away', async () => {
    const turn = paced(1)
    const waiting = Array.from({ length: MAX_WAIT_MS / 1000 + 1 }, () => turn())
    expect(await turn()).toBe(false)
    await vi.advanceTimersByTimeAsync(MAX_WAIT_MS)
    expect(await Promise.all(waiting)).toEqual(waiting.map(() => true))
  })

  it('waits for nothing with perSecond 0', async () => {
    const turn = paced(0)
    expect(await Promise.all([turn(), turn(), turn()])).toEqual([true, true, true])
  })
})
