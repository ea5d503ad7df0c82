// Liveness and readiness (readiness asks the database, and waits at most readyTimeoutMs); no token needed.
import { sql } from 'drizzle-orm'
import { Health } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { createRouter, jsonResponse, publicRoute, RETRY_AFTER_SECONDS } from '../http/http.js'

const healthz = publicRoute({
  method: 'get',
  path: '/healthz',
  tags: ['health'],
  operationId: 'getLiveness',
  summary: 'Liveness: the process answers (no token)',
  responses: { 200: jsonResponse(Health, 'the process is up') },
})

const readyz = publicRoute({
  method: 'get',
  path: '/readyz',
  tags: ['health'],
  operationId: 'getReadiness',
  summary: 'Readiness: the database answers in time (no token)',
  responses: {
    200: jsonResponse(Health, 'the database answers'),
    503: jsonResponse(Health, 'the database does not answer'),
  },
})

export const healthRoutes = (deps: Deps) =>
  createRouter()
    .openapi(healthz, (c) => c.json({ status: 'ok' as const }, 200))
    .openapi(readyz, async (c) => {
      const ok = await answersWithin(deps, deps.config.readyTimeoutMs)
      if (!ok || deps.waker.isClosed) {
        c.header('retry-after', String(RETRY_AFTER_SECONDS))
        return c.json({ status: 'unavailable' as const, database: deps.db.kind }, 503)
      }
      return c.json({ status: 'ok' as const, database: deps.db.kind }, 200)
    })

// Whether the database answers a trivial statement in time; a load balancer's probe never waits longer.
async function answersWithin(deps: Deps, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  const probe = deps.db.orm.execute(sql`SELECT 1`).then(
    () => true,
    () => false,
  )
  try {
    return await Promise.race([probe, late])
  } finally {
    clearTimeout(timer)
  }
}
