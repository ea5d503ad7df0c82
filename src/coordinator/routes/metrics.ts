// GET /metrics: the Prometheus exposition, rebuilt at most every few seconds and paced (http/metrics.ts).
import { createRoute, z } from '@hono/zod-openapi'
import { ApiError, ErrorCode } from '../http/errors.js'
import { createRouter, errorResponse } from '../http/http.js'
import type { Metrics } from '../http/metrics.js'

const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  tags: ['health'],
  operationId: 'getMetrics',
  summary: 'Prometheus text exposition (no token, or PREFLIGHT_METRICS_TOKEN when it is set)',
  responses: {
    200: { description: 'metrics', content: { 'text/plain': { schema: z.string() } } },
    401: errorResponse('PREFLIGHT_METRICS_TOKEN is set and the request does not bear it (code unauthorized)'),
    429: errorResponse('more scrapes are waiting than 5 s of turns (code rate-limited); see Retry-After'),
  },
})

// No token, or the metrics token when one is set. Set apart: a `{}` in the route's own type would blur
// the app's type (every path `string`) for hono/client.
Object.assign(metricsRoute, { security: [{}, { metrics: [] }] })

export function metricsRoutes(metrics: Pick<Metrics, 'registry' | 'exposition' | 'turn'>) {
  return createRouter().openapi(metricsRoute, async (c) => {
    if (!(await metrics.turn())) {
      throw new ApiError(429, ErrorCode.RateLimited, 'too many scrapes at once; try again shortly')
    }
    return c.text(await metrics.exposition(), 200, { 'content-type': metrics.registry.contentType })
  })
}
