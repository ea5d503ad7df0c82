// The circuit in front of a connection pool: once a connection is refused or lost, statements fail at
// once instead of waiting for the pool to reconnect, and one probe at a time looks for the database.
//
// Why: postgres.js queues a statement while no connection is open and hands one to each reconnect
// attempt. With the database gone, about 20 statements a second (10 connections, reconnects at most
// 0.5 s apart) were failed, whatever the arrival rate: at 40 requests a second the queue grew, 503s
// took seconds, and requests sent late in an outage were held until it ended.
import { CircuitOpenError, lostConnection } from './unreachable.js'

// A statement (or transaction) the circuit let through to the pool.
export interface Admitted {
  // Fails it now with `err`, unless it already runs on a connection (then its fate is that connection's).
  abandon(err: Error): void
}

// While open, one probe every this long: the database is found again within about this of its return.
export const PROBE_INTERVAL_MS = 200

export class Circuit {
  #open = false
  #admitted = new Set<Admitted>()
  #listeners = new Set<(open: boolean) => void>()
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  // `probe` asks the database something trivial through the pool, past the circuit.
  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly probeIntervalMs = PROBE_INTERVAL_MS,
  ) {}

  get isOpen(): boolean {
    return this.#open
  }

  // Lets a statement through (undefined), or answers the error to fail it with, unsent.
  admit(statement: Admitted): CircuitOpenError | undefined {
    if (this.#open) return new CircuitOpenError()
    this.#admitted.add(statement)
    return undefined
  }

  // A statement let through has ended; one that lost its connection, or never got one, opens the circuit.
  settled(statement: Admitted, err?: unknown): void {
    this.#admitted.delete(statement)
    if (err !== undefined && lostConnection(err)) this.#trip()
  }

  // Told `true` when the circuit opens, `false` when a probe closes it; returns the unsubscribe.
  onChange(listener: (open: boolean) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  #trip() {
    if (this.#open || this.#stopped) return
    this.#open = true
    // Those still waiting in the pool's queue would wait for a reconnect attempt each: fail them now.
    const waiting = [...this.#admitted]
    this.#admitted.clear()
    const err = new CircuitOpenError()
    for (const statement of waiting) statement.abandon(err)
    this.#tell(true)
    // The first probe at once: one lost connection (a backend terminated) is not yet an outage, and the
    // pool's other connections answer it.
    this.#probeAfter(0)
  }

  #probeAfter(ms: number) {
    this.#timer = setTimeout(async () => {
      this.#timer = undefined
      const answered = await this.probe().then(
        () => true,
        () => false,
      )
      if (this.#stopped) return
      if (!answered) return this.#probeAfter(this.probeIntervalMs)
      this.#open = false
      this.#tell(false)
    }, ms)
    this.#timer.unref()
  }

  #tell(open: boolean) {
    for (const listener of this.#listeners) listener(open)
  }
}
