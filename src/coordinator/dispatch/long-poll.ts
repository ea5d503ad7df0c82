// Long-polls: look, and while the answer is not what the caller waits for, park until a wake-up or the
// time left, then look again; answered at the end of the wait with the last look. The time comes from
// an injected clock (Deps.clock), so the deadline arithmetic is tested without waiting.

// Milliseconds since the epoch, as Date.now() (the app's is Date.now(); tests pass their own).
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

// The time left (ms, negative once over) of a wait of `ms` begun now.
export function countdown(clock: Clock, ms: number): () => number {
  const end = clock.now() + ms
  return () => end - clock.now()
}

export interface Poll<T> {
  look(): Promise<T>
  // the answer is what the caller waits for: it is answered at once
  ready(answer: T): boolean
  // Parks until a wake-up, `ms` or the signal's abort, whichever comes first. `left` tells the time left
  // then, for a wait of its own after the wake-up.
  park(answer: T, ms: number, left: () => number): Promise<unknown>
  // what wakes the poll has shut down: no wake-up will come
  closed(): boolean
}

// The first look that is ready; else the last look once `waitMs` has passed, the signal has aborted or
// the wake-ups have closed. A look always follows a park, also one that ended by the abort.
export async function longPoll<T>(
  poll: Poll<T>,
  waitMs: number,
  { clock, signal }: { clock: Clock; signal: Pick<AbortSignal, 'aborted'> },
): Promise<T> {
  const left = countdown(clock, waitMs)
  for (;;) {
    const answer = await poll.look()
    const ms = left()
    if (poll.ready(answer) || ms <= 0 || signal.aborted || poll.closed()) return answer
    await poll.park(answer, ms, left)
  }
}
