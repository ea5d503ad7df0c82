// Operators' read side: GET /v1/reports (filtered, keyset-paginated) and GET /v1/reports/summary.
import { createRoute } from '@hono/zod-openapi'
import { ReportPage, ReportsQuery, SummaryPage, SummaryQuery } from '../../contract/reports.js'
import type { Deps } from '../config.js'
import { listReports } from '../db/reports.js'
import { summarise } from '../db/summary.js'
import { requireRole } from '../http/auth.js'
import { authErrors, createRouter, jsonResponse } from '../http/http.js'

const listRoute = createRoute({
  method: 'get',
  path: '/v1/reports',
  summary: 'Preflight reports, newest first, keyset-paginated (operator)',
  security: [{ bearer: [] }],
  middleware: [requireRole('operator')] as const,
  request: { query: ReportsQuery },
  responses: { 200: jsonResponse(ReportPage, 'one page of reports'), ...authErrors },
})

const summaryRoute = createRoute({
  method: 'get',
  path: '/v1/reports/summary',
  summary: 'Per subagent and requirement: checks, met, unmet, error, last met, drift (operator)',
  security: [{ bearer: [] }],
  middleware: [requireRole('operator')] as const,
  request: { query: SummaryQuery },
  responses: { 200: jsonResponse(SummaryPage, 'one page of figures'), ...authErrors },
})

export const reportRoutes = (deps: Pick<Deps, 'db'>) =>
  createRouter()
    .openapi(listRoute, async (c) => {
      return c.json(await listReports(deps.db.orm, c.req.valid('query')), 200)
    })
    .openapi(summaryRoute, async (c) => {
      return c.json(await summarise(deps.db.orm, c.req.valid('query')), 200)
    })
