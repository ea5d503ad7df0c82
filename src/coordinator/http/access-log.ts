// One record per request: its id (X-Request-Id, see app.ts), method, route pattern (never the raw path:
// ids in it are not the request's shape), status and duration; a 500's error goes with it.
import type { MiddlewareHandler } from 'hono'
import type { Log } from '../../log/log.js'
import { type AppEnv, routeOf } from './http.js'

// Load balancers, health checks and Prometheus ask these all day: their records are debug.
const PROBES = new Set(['/healthz', '/readyz', '/metrics'])

export function accessLog(log: Log): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now()
    try {
      await next()
    } finally {
      const route = routeOf(c)
      const status = c.res.status
      const fields = {
        // letters, digits, "_", "-" and "=" (app.ts), the method Node's parser read, a route pattern
        reqId: c.get('requestId'),
        method: c.req.method,
        route,
        status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
      }
      const level = PROBES.has(route) ? 'debug' : 'info'
      if (status >= 500) log.error('request', { ...fields, ...(c.error ? { err: c.error } : {}) })
      else if (log.plain) log.plain(level, 'request', fields)
      else log[level]('request', fields)
    }
  }
}
