// Operators' read side: GET /v1/reports (filtered, keyset-paginated) and GET /v1/reports/summary.
import { ReportPage, ReportsQuery, SummaryPage, SummaryQuery } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { listReports } from '../db/reports.js'
import { summarise } from '../db/summary.js'
import { authedRoute, createRouter, jsonResponse } from '../http/http.js'

const listRoute = authedRoute(['operator'], {
  method: 'get',
  path: '/v1/reports',
  tags: ['reports'],
  operationId: 'listReports',
  summary: 'Preflight reports, newest first, keyset-paginated (operator)',
  request: { query: ReportsQuery },
  responses: { 200: jsonResponse(ReportPage, 'one page of reports') },
})

const summaryRoute = authedRoute(['operator'], {
  method: 'get',
  path: '/v1/reports/summary',
  tags: ['reports'],
  operationId: 'summariseReports',
  summary: 'Per subagent and requirement: checks, met, unmet, error, last met, drift (operator)',
  request: { query: SummaryQuery },
  responses: { 200: jsonResponse(SummaryPage, 'one page of figures') },
})

export const reportRoutes = (deps: Pick<Deps, 'db'>) =>
  createRouter()
    .openapi(listRoute, async (c) => {
      return c.json(await listReports(deps.db.orm, c.req.valid('query')), 200)
    })
    .openapi(summaryRoute, async (c) => {
      return c.json(await summarise(deps.db.orm, c.req.valid('query')), 200)
    })
