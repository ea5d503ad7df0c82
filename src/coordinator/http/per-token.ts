// How many long-polls, and how many event streams, one token holds open at once on this coordinator:
// past its limit a request is refused 429 `concurrency-limit` (with Retry-After) before it waits, so one
// token cannot hold every stream or connection. A place is given back when its request ends, a client
// that went away included.
import type { Context } from 'hono'
import { ApiError, ErrorCode } from './errors.js'
import { type AppEnv, errorResponse } from './http.js'

// The refusal as the long-polls' routes declare it.
export const LONG_POLLS_HELD = errorResponse(
  'the token holds its limit of long-polls on this coordinator (code concurrency-limit); see Retry-After',
)

export class PerToken {
  private held = new Map<number, number>()

  constructor(
    // 'long-polls', 'event streams': for the refusal's message
    private readonly what: string,
    private readonly limit: number,
  ) {}

  // Places the token holds now.
  holds(tokenId: number): number {
    return this.held.get(tokenId) ?? 0
  }

  // Takes one of the token's places, or throws 429 when it holds its limit; the function returned gives
  // the place back.
  take(tokenId: number): () => void {
    const n = this.holds(tokenId)
    if (n >= this.limit)
      throw new ApiError(
        429,
        ErrorCode.ConcurrencyLimit,
        `this token holds as many ${this.what} on this coordinator as it may (${this.limit}); try again once one has ended`,
        { limit: this.limit },
      )
    this.held.set(tokenId, n + 1)
    return () => {
      const left = this.holds(tokenId) - 1
      if (left > 0) this.held.set(tokenId, left)
      else this.held.delete(tokenId)
    }
  }
}

// Runs a long-poll in one of its token's places when it may wait at all (`waitMs` > 0).
export async function holding<T>(
  c: Context<AppEnv>,
  places: PerToken,
  waitMs: number,
  wait: () => Promise<T>,
): Promise<T> {
  if (waitMs <= 0) return wait()
  const release = places.take(c.get('tokenId'))
  try {
    return await wait()
  } finally {
    release()
  }
}
