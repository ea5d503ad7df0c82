// Wakes the requests that wait on one dispatch — a long-poll of GET /v1/dispatches/{id}, an event
// stream — when it may have changed. At once for what this coordinator writes (`changed(id)`, from the
// routes and the sweep) and for every coordinator's endings (NOTIFY preflight_dispatch_ended, see
// server.ts); for the rest (another coordinator's worker events), one look every `pollMs` at the newest
// event of all the watched dispatches together: one statement per coordinator, not one per request.
interface Waiter {
  // the id of the newest event the waiter has seen: a look that finds a newer one wakes it
  seen: number
  done(): void
}

export class DispatchWatch {
  private waiters = new Map<string, Set<Waiter>>()
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly look: (ids: string[]) => Promise<Map<string, number>>,
    private readonly pollMs: number,
  ) {}

  get isClosed(): boolean {
    return this.closed
  }

  // Requests parked in wait() now: tests wait on it to know a long-poll or a stream is parked.
  get waiting(): number {
    let n = 0
    for (const set of this.waiters.values()) n += set.size
    return n
  }

  // Resolves when the dispatch may have changed since event `seen`, after `ms`, on abort or on close.
  wait(id: string, seen: number, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.closed || signal?.aborted) return Promise.resolve()
    return new Promise((resolve) => {
      const waiter: Waiter = {
        seen,
        done: () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', waiter.done)
          const set = this.waiters.get(id)
          set?.delete(waiter)
          if (set?.size === 0) this.waiters.delete(id)
          resolve()
        },
      }
      const timer = setTimeout(waiter.done, ms)
      signal?.addEventListener('abort', waiter.done, { once: true })
      const set = this.waiters.get(id) ?? new Set()
      set.add(waiter)
      this.waiters.set(id, set)
      this.schedule()
    })
  }

  // This dispatch changed (or may have): its waiters look again.
  changed(id: string): void {
    for (const waiter of [...(this.waiters.get(id) ?? [])]) waiter.done()
  }

  // Every waiter looks again: after a lost LISTEN connection, a notification may have been missed.
  wakeAll(): void {
    for (const id of [...this.waiters.keys()]) this.changed(id)
  }

  // Ends every wait now and every later one at once (shutdown).
  close(): void {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
    this.wakeAll()
  }

  private schedule(): void {
    if (this.timer || this.closed || this.waiters.size === 0) return
    this.timer = setTimeout(() => void this.tick(), this.pollMs)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    const ids = [...this.waiters.keys()]
    if (ids.length === 0) {
      // the waiters all left since the look was planned: none until the next one comes
      this.timer = undefined
      return
    }
    try {
      const last = await this.look(ids)
      // a dispatch that is gone wakes its waiters too: they read it and answer so
      for (const id of ids)
        for (const waiter of [...(this.waiters.get(id) ?? [])])
          if ((last.get(id) ?? Number.POSITIVE_INFINITY) > waiter.seen) waiter.done()
    } catch {
      // the database is away: the waiters' own timeouts still answer them; the next look may succeed
    } finally {
      this.timer = undefined
      this.schedule()
    }
  }
}
