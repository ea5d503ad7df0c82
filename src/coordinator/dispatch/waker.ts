// Wakes long-polling claims when a dispatch may have become claimable. Only a hint: claims poll anyway.
export class Waker {
  private waiters = new Set<() => void>()
  private closed = false

  get isClosed(): boolean {
    return this.closed
  }

  // Claims parked in wait() now: tests wait on it to know a long-poll is parked.
  get waiting(): number {
    return this.waiters.size
  }

  // Resolves on the next wake(), after `ms`, on abort or on close — whichever comes first.
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.closed || signal?.aborted) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.waiters.delete(done)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.waiters.add(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  wake(): void {
    for (const done of [...this.waiters]) done()
  }

  // Ends every wait now and every later one at once (shutdown).
  close(): void {
    this.closed = true
    this.wake()
  }
}
