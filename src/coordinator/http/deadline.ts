// Every request ends by its deadline: one still waiting then (for a connection while the database is
// away, for a host that stopped answering) answers 503 `unavailable` with Retry-After instead of
// hanging. Its handler is told through `c.var.deadline` (an AbortSignal) and stops where it looks.
import type { Context, MiddlewareHandler } from 'hono'
import { ApiError, ErrorCode } from './errors.js'
import type { AppEnv } from './http.js'

// Over for its handler: the client went away, or the request's deadline passed.
export const requestGone = (c: Context<AppEnv>): AbortSignal =>
  c.var.deadline ? AbortSignal.any([c.req.raw.signal, c.var.deadline]) : c.req.raw.signal

export function deadline(msFor: (c: Context<AppEnv>) => number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const ms = msFor(c)
    const expired = new AbortController()
    c.set('deadline', expired.signal)
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired.abort()
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
