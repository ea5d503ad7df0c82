// A walk's turns on the event loop: it hands the loop back once it has held it for a slice, so that timers
// (its check's timeout) and child processes (git) get theirs, and looks at its stop every few hundred entries.

// hand the event loop back this often
const SLICE_MS = 4
// entries between two looks at the clock: reading and judging one costs about a microsecond
export const BATCH = 256

export class Turns {
  private sliceStart = performance.now()
  private entries = 0

  constructor(
    readonly signal: AbortSignal,
    private readonly sliceMs = SLICE_MS,
  ) {}

  // One entry more; whether it ends a batch, when the caller takes its turn and looks at the signal.
  due(): boolean {
    return ++this.entries % BATCH === 0
  }

  // Whether this slice is used up: then the caller hands the event loop back (give). Not async itself, so
  // that a walk that goes on costs no promise.
  over(): boolean {
    return performance.now() - this.sliceStart > this.sliceMs
  }

  // Hands the event loop back now; the next slice starts once it is back.
  async give(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve))
    this.sliceStart = performance.now()
  }
}
