// DispatchWatch: requests waiting on one dispatch wake when this coordinator says it changed, when one
// shared look at the database finds a newer event than they saw (or the dispatch gone), at their
// timeout, on abort and on close — and the look runs once per interval for all of them.
import { describe, expect, it } from 'vitest'
import { DispatchWatch } from '../../../src/coordinator/dispatch/watch.js'
import { waitFor } from '../../support/wait.js'

// A watch whose look answers `last` (id → newest event id) and counts its calls.
function watchOf(last: Map<string, number>, pollMs = 20) {
  const looks: string[][] = []
  const watch = new DispatchWatch(async (ids) => {
    looks.push(ids)
    return new Map([...last].filter(([id]) => ids.includes(id)))
  }, pollMs)
  return { watch, looks }
}

const timed = async (p: Promise<void>) => {
  const started = performance.now()
  await p
  return performance.now() - started
}

describe('DispatchWatch', () => {
  it('wakes the waiters of a dispatch this coordinator changed, and only those', async () => {
    const { watch } = watchOf(new Map(), 60_000)
    let other = false
    const a = watch.wait('a', 1, 5_000)
    void watch.wait('b', 1, 300).then(() => {
      other = true
    })
    expect(watch.waiting).toBe(2)
    watch.changed('a')
    expect(await timed(a)).toBeLessThan(100)
    expect(other).toBe(false)
    expect(watch.waiting).toBe(1)
    watch.close()
  })

  it('wakes a waiter when the shared look finds an event newer than it saw', async () => {
    const last = new Map([['a', 5]])
    const { watch, looks } = watchOf(last)
    let woken = false
    const waiting = watch.wait('a', 5, 5_000).then(() => {
      woken = true
    })
    // nothing newer: it goes on waiting through several looks (however late a busy machine runs them)
    await waitFor(() => looks.length >= 3, { what: 'three looks' })
    expect(woken).toBe(false)
    last.set('a', 6)
    expect(await timed(waiting)).toBeLessThan(1_000)
    watch.close()
  })

  it('looks once per interval for all the waiters together, and not at all without one', async () => {
    const { watch, looks } = watchOf(
      new Map([
        ['a', 1],
        ['b', 1],
      ]),
    )
    const waits = [watch.wait('a', 1, 150), watch.wait('a', 1, 150), watch.wait('b', 1, 150)]
    await Promise.all(waits)
    expect(looks.length).toBeGreaterThanOrEqual(1)
    expect(looks.length).toBeLessThanOrEqual(9)
    expect(looks.every((ids) => ids.length === 2)).toBe(true)
    const after = looks.length
    await new Promise((r) => setTimeout(r, 100))
    expect(looks.length).toBe(after)
  })

  it('wakes the waiters of a dispatch that is gone', async () => {
    const { watch } = watchOf(new Map())
    expect(await timed(watch.wait('gone', 3, 5_000))).toBeLessThan(1_000)
    watch.close()
  })

  it('answers at the timeout, on abort, and at once on close (and after it)', async () => {
    const { watch } = watchOf(new Map([['a', 1]]), 60_000)
    expect(await timed(watch.wait('a', 1, 80))).toBeGreaterThanOrEqual(70)
    const stop = new AbortController()
    const aborted = watch.wait('a', 1, 5_000, stop.signal)
    stop.abort()
    expect(await timed(aborted)).toBeLessThan(100)
    const closing = watch.wait('a', 1, 5_000)
    watch.close()
    expect(await timed(closing)).toBeLessThan(100)
    expect(watch.isClosed).toBe(true)
    expect(await timed(watch.wait('a', 1, 5_000))).toBeLessThan(50)
    expect(watch.waiting).toBe(0)
  })
})
