// Every request ends by its deadline: one still waiting then (for a connection while the database is
// away, for a host that stopped answering) answers 503 `unavailable` with Retry-After instead of
// hanging. A handler that waits (the long-polls) is told through `requestGone(c)`, an AbortSignal made
// only when asked for: most requests never look, and a signal per request was 3 % of the
// coordinator's CPU (docs/benchmarks.md). A handler that only asks whether it is over asks `isGone(c)`,
// which makes none: two AbortControllers and a listener were ~20 µs of a claim.
import type { Context, MiddlewareHandler } from 'hono'
import { ApiError, ErrorCode } from './errors.js'
import { type AppEnv, outgoingOf } from './http.js'

export interface Deadline {
  // the request as a signal, aborted when its deadline passes or its client goes (at once when either has)
  signal(): AbortSignal
  passed(): boolean
}

// Over for its handler: the client went away, or the request's deadline passed.
export const requestGone = (c: Context<AppEnv>): AbortSignal =>
  c.var.deadline ? c.var.deadline.signal() : c.req.raw.signal

// The same, now, without a signal: on the server, Node's response is destroyed once its client has
// gone; without one (app.request() in the tests), the request's own signal says so.
export function isGone(c: Context<AppEnv>): boolean {
  if (c.var.deadline?.passed()) return true
  const outgoing = outgoingOf(c)
  return outgoing ? outgoing.destroyed : c.req.raw.signal.aborted
}

export function deadline(msFor: (c: Context<AppEnv>) => number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const ms = msFor(c)
    let expired: AbortController | undefined
    let passed = false
    // one signal for both, rather than a third made of the two by AbortSignal.any
    c.set('deadline', {
      signal() {
        if (!expired) {
          const gone = new AbortController()
          const client = c.req.raw.signal
          if (client.aborted) gone.abort(client.reason)
          else client.addEventListener('abort', () => gone.abort(client.reason), { once: true })
          expired = gone
        }
        if (passed) expired.abort()
        return expired.signal
      },
      passed: () => passed,
    })
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        passed = true
        expired?.abort()
        reject(new ApiError(503, ErrorCode.Unavailable, `no answer within ${ms} ms; try again shortly`))
      }, ms)
    })
    try {
      await Promise.race([next(), late])
    } finally {
      clearTimeout(timer)
    }
  }
}
