// The request body limit. Over Node's HTTP server, a request with Content-Length and no
// Transfer-Encoding carries exactly that many bytes (the parser enforces it), so the header alone
// decides, without touching the body: hono's bodyLimit reads `c.req.raw.body`, which makes
// @hono/node-server build a full web Request and stream for every request (most of a small
// request's cost). Chunked bodies, and requests not from Node's server (app.request), go through
// hono's bodyLimit, which counts the bytes as they arrive.
import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'

export function limitBody(maxSize: number, onError: (c: Context) => Response): MiddlewareHandler {
  const counting = bodyLimit({ maxSize, onError })
  return async (c, next) => {
    const length = c.req.header('content-length')
    const fromNode = (c.env as { incoming?: unknown } | undefined)?.incoming !== undefined
    if (!fromNode || length === undefined || c.req.header('transfer-encoding') !== undefined) {
      return counting(c, next)
    }
    if (!/^\d+$/.test(length) || Number(length) > maxSize) return onError(c)
    await next()
  }
}
