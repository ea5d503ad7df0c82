// The edges of every request, in one middleware: its id (X-Request-Id), the headers every answer carries,
// its latency in the metrics, and its access record. Apart, as four middlewares, they were 3–4 % of the
// coordinator's CPU a request, most of it in headers set on web-standard Headers objects
// (docs/benchmarks.md). Here they are set on Node's own response, which the server writes with the
// handler's; and a request's answer keeps the handler's plain headers.
import { randomUUID } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import type { Log } from '../../log/log.js'
import { type AppEnv, outgoingOf, routeOf } from './http.js'

// hono's secureHeaders() defaults, on every answer (a handler that sets one of these itself keeps its value).
export const SECURE_HEADERS: readonly (readonly [string, string])[] = [
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Origin-Agent-Cluster', '?1'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
]

// An incoming X-Request-Id of up to 255 letters, digits, "_", "-" and "=" is kept, any other replaced by
// a random UUID; either is the answer's X-Request-Id and the access record's reqId.
const SANE_ID = /^[\w\-=]{1,255}$/

// Load balancers, health checks and Prometheus ask these all day: their records are debug.
const PROBES = new Set(['/healthz', '/readyz', '/metrics'])

export interface EdgeOptions {
  log?: Log
  metrics?: { observeRequest(method: string, route: string, status: number, ms: number): void }
}

export function edges({ log, metrics }: EdgeOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now()
    const given = c.req.header('x-request-id')
    const reqId = given !== undefined && SANE_ID.test(given) ? given : randomUUID()
    c.set('requestId', reqId)
    try {
      await next()
    } finally {
      answerHeaders(c, reqId)
      const ms = performance.now() - started
      const route = routeOf(c)
      const { status } = c.res
      metrics?.observeRequest(c.req.method, route, status, ms)
      if (log) record(log, c, { reqId, route, status, ms })
    }
  }
}

// On the server, onto Node's response: written with the handler's headers, which win a clash. Without
// one (app.request() in the tests), onto the answer itself.
function answerHeaders(c: Context<AppEnv>, reqId: string) {
  const outgoing = outgoingOf(c)
  if (outgoing && !outgoing.headersSent) {
    for (const [name, value] of SECURE_HEADERS) outgoing.setHeader(name, value)
    outgoing.setHeader('X-Request-Id', reqId)
    return
  }
  const headers = c.res.headers
  for (const [name, value] of [...SECURE_HEADERS, ['X-Request-Id', reqId] as const])
    if (!headers.has(name)) headers.set(name, value)
}

// One record per request: its id, method, route pattern (never the raw path: ids in it are not the
// request's shape), status and duration; a 500's error goes with it.
function record(
  log: Log,
  c: Context<AppEnv>,
  { reqId, route, status, ms }: { reqId: string; route: string; status: number; ms: number },
) {
  const fields = {
    // letters, digits, "_", "-" and "=" (above), the method Node's parser read, a route pattern
    reqId,
    method: c.req.method,
    route,
    status,
    durationMs: Math.round(ms * 10) / 10,
  }
  const level = PROBES.has(route) ? 'debug' : 'info'
  if (status >= 500) log.error('request', { ...fields, ...(c.error ? { err: c.error } : {}) })
  else if (log.plain) log.plain(level, 'request', fields)
  else log[level]('request', fields)
}
