// What this coordinator's claims answered, kept for the lease's preflight report: with it the
// report is judged and written in one round trip instead of a read and a write. Only a hint: the
// write re-checks the fence (dispatch, attempt, lease token), and a miss (another coordinator
// claimed, a restart, an evicted entry) or a write that matches nothing reads the dispatch as before.
import type { ContextRequires } from '../../contract/index.js'

// Bounded: a lease whose report never comes must not grow the map for ever.
const MAX_HINTS = 10_000

export interface ClaimHint {
  contextRequires: ContextRequires | undefined
}

export class ClaimHints {
  private hints = new Map<string, ClaimHint>()

  remember(id: string, attempt: number, leaseToken: string, hint: ClaimHint): void {
    if (this.hints.size >= MAX_HINTS) this.hints.clear()
    this.hints.set(keyOf(id, attempt, leaseToken), hint)
  }

  // Answers the hint once: a retried report reads, which is what finds the stored answer.
  take(id: string, attempt: number, leaseToken: string): ClaimHint | undefined {
    const key = keyOf(id, attempt, leaseToken)
    const hint = this.hints.get(key)
    this.hints.delete(key)
    return hint
  }
}

const keyOf = (id: string, attempt: number, leaseToken: string) => `${id}\0${attempt}\0${leaseToken}`
