// Liveness and readiness (readiness asks the database); no token needed.
import { createRoute } from '@hono/zod-openapi'
import { sql } from 'drizzle-orm'
import { Health } from '../contract/api.js'
import type { Deps } from '../deps.js'
import { createRouter, jsonResponse } from '../http.js'

const healthz = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['health'],
  responses: { 200: jsonResponse(Health, 'the process is up') },
})

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  tags: ['health'],
  responses: {
    200: jsonResponse(Health, 'the database answers'),
    503: jsonResponse(Health, 'the database does not answer'),
  },
})

export const healthRoutes = (deps: Deps) =>
  createRouter()
    .openapi(healthz, (c) => c.json({ status: 'ok' as const }, 200))
    .openapi(readyz, async (c) => {
      const ok = await deps.db.orm.execute(sql`SELECT 1`).then(
        () => true,
        () => false,
      )
      if (!ok || deps.waker.isClosed)
        return c.json({ status: 'unavailable' as const, database: deps.db.kind }, 503)
      return c.json({ status: 'ok' as const, database: deps.db.kind }, 200)
    })
