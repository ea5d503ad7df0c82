// Wakes long-polls when what they wait for may have come: claims when a dispatch is queued or requeued,
// the endings' feed when a dispatch ends. Told by this coordinator's writes and, through NOTIFY, by the
// others'; a long-poll looks again without a wake-up only as a slow safety net (claimPollMs, endingsPollMs).
export class Waker {
  private waiters = new Set<() => void>()
  private closed = false
  // performance.now() of the last wake()
  private wokenAt = Number.NEGATIVE_INFINITY

  get isClosed(): boolean {
    return this.closed
  }

  // Claims parked in wait() now: tests wait on it to know a long-poll is parked.
  get waiting(): number {
    return this.waiters.size
  }

  // Resolves true on the next wake(), at once when one came at or after `since` (performance.now(): a
  // wake-up that came while the caller looked, before it waited, is not lost); false after `ms` or on
  // abort; at once on close.
  wait(ms: number, signal?: AbortSignal, since = Number.POSITIVE_INFINITY): Promise<boolean> {
    if (this.closed || this.wokenAt >= since) return Promise.resolve(true)
    if (signal?.aborted) return Promise.resolve(false)
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer)
        this.waiters.delete(woke)
        signal?.removeEventListener('abort', over)
        resolve(woken)
      }
      const woke = () => done(true)
      // the time is up, or the caller has gone
      const over = () => done(false)
      const timer = setTimeout(over, ms)
      this.waiters.add(woke)
      signal?.addEventListener('abort', over, { once: true })
    })
  }

  wake(): void {
    this.wokenAt = performance.now()
    for (const done of [...this.waiters]) done()
  }

  // Ends every wait now and every later one at once (shutdown).
  close(): void {
    this.closed = true
    this.wake()
  }
}
