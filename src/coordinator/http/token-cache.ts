// Resolved bearer tokens, kept briefly so most requests need no lookup. Anything that takes a token
// away invalidates the whole cache: a revoke on this coordinator at once, one elsewhere through
// NOTIFY (src/coordinator/server.ts), and a LISTEN that reconnected (a notification may have been missed).
// `ttlMs` bounds what a lost notification could cost.
import type { Role } from '../../contract/index.js'

// Bounded: a flood of distinct valid tokens must not grow the map for ever.
const MAX_ENTRIES = 10_000

// What a token resolves to: its role, and its id (who cancelled a dispatch, say).
export interface Principal {
  role: Role
  tokenId: number
}

export class TokenCache<V = Role> {
  private entries = new Map<string, { role: V; until: number }>()
  private generation = 0

  constructor(private readonly ttlMs: number) {}

  get(hash: string): V | undefined {
    const hit = this.entries.get(hash)
    if (hit && hit.until > Date.now()) return hit.role
    if (hit) this.entries.delete(hash)
    return undefined
  }

  // Taken before a lookup and handed to set(): a lookup that an invalidation overtook (it read the
  // token before a revoke committed, and answers after) is not kept.
  stamp(): number {
    return this.generation
  }

  set(hash: string, role: V, expiresAtMs: number | null, stamp: number): void {
    if (stamp !== this.generation || this.ttlMs <= 0) return
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear()
    const until = Math.min(Date.now() + this.ttlMs, expiresAtMs ?? Number.POSITIVE_INFINITY)
    this.entries.set(hash, { role, until })
  }

  invalidate(): void {
    this.generation++
    this.entries.clear()
  }
}
