// A walk's turns on the event loop. Every 256 entries it reads or judges, and after each directory, it looks
// at the clock; once it has held the loop for a slice it hands it back, so that timers (its check's timeout)
// and child processes (git) get theirs, and then looks at whether it was told to stop.

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

  // One entry more; whether the caller hands the event loop back (give) and then looks at its signal: at the
  // end of a batch, once the slice is used up.
  due(): boolean {
    return ++this.entries % BATCH === 0 && this.over()
  }

  // Whether the slice is used up. Neither this nor due() is async, so that a walk that goes on costs no
  // promise.
  over(): boolean {
    return performance.now() - this.sliceStart > this.sliceMs
  }

  // Hands the event loop back now; the next slice starts once it is back.
  async give(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve))
    this.sliceStart = performance.now()
  }
}
