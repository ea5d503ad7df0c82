// The request body limit. Over Node's HTTP server, a request with Content-Length and no
// Transfer-Encoding carries exactly that many bytes (the parser enforces it), so the header alone
// decides, without touching the body: hono's bodyLimit reads `c.req.raw.body`, which makes
// @hono/node-server build a full web Request and stream for every request (most of a small
// request's cost). Chunked bodies, and requests not from Node's server (app.request), go through
// hono's bodyLimit, which counts the bytes as they arrive.
import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'

export function limitBody(
  maxSize: number,
  onError: (c: Context) => Response | Promise<Response>,
): MiddlewareHandler {
  const counting = bodyLimit({ maxSize, onError })
  return async (c, next) => {
    const incoming = (c.env as { incoming?: { httpVersionMajor?: number } } | undefined)?.incoming
    const length = c.req.header('content-length')
    const chunked = c.req.header('transfer-encoding') !== undefined
    // An HTTP/1 request with neither header has no body (RFC 9112 §6.3): a GET, usually.
    if (incoming?.httpVersionMajor === 1 && length === undefined && !chunked) return next()
    if (!incoming || length === undefined || chunked) return counting(c, next)
    if (!/^\d+$/.test(length) || Number(length) > maxSize) return onError(c)
    await next()
  }
}
