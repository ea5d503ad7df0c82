// createApp(deps): the coordinator's HTTP app — middleware, the route files, one error envelope.
import type { Context } from 'hono'
import { type AppDeps, resolveDeps } from './config.js'
import { authenticate, requireMetricsToken } from './http/auth.js'
import { limitBody } from './http/body-limit.js'
import { deadline } from './http/deadline.js'
import { edges } from './http/edges.js'
import { ApiError, ErrorCode } from './http/errors.js'
import { type AppEnv, createRouter, renderError } from './http/http.js'
import { describeApi } from './http/openapi.js'
import { dispatchRoutes, ENDINGS_PATH } from './routes/dispatches.js'
import { docsRoutes } from './routes/docs.js'
import { healthRoutes } from './routes/health.js'
import { metricsRoutes } from './routes/metrics.js'
import { reportRoutes } from './routes/reports.js'
import { subagentRoutes } from './routes/subagents.js'
import { tokenRoutes } from './routes/tokens.js'
import { webhookRoutes } from './routes/webhooks.js'
import { CLAIM_PATH, workerRoutes } from './routes/worker.js'
import { isPage, renderPageError, uiRoutes } from './ui/routes.js'

// One error handling for the whole app: the same status, code and message on every path, as the envelope
// for the API and as a page for a browser on /ui.
const answer = (err: unknown, c: Context<AppEnv>) =>
  (isPage(c.req.path) ? renderPageError : renderError)(err, c)

export function createApp(input: AppDeps) {
  const deps = resolveDeps(input)
  const app = createRouter()
  const { requestTimeoutMs, claimWaitCapMs, endingsWaitCapMs, dispatchWaitCapMs } = deps.config
  // A long-poll may wait its capped waitMs before its deadline starts to matter.
  const waitCap = (c: Context<AppEnv>) => {
    const path = c.req.path
    if (path === CLAIM_PATH) return claimWaitCapMs
    if (path === ENDINGS_PATH) return endingsWaitCapMs
    const waits = c.req.method === 'GET' && path.startsWith('/v1/dispatches/') && c.req.query('waitFor')
    return waits ? dispatchWaitCapMs : 0
  }
  app.use(
    '*',
    edges({ log: deps.log, metrics: deps.metrics }),
    deadline((c) => requestTimeoutMs + waitCap(c)),
  )
  app.use(
    '/v1/*',
    limitBody(deps.config.bodyLimitBytes, (c) =>
      renderError(
        new ApiError(413, ErrorCode.PayloadTooLarge, `the body is over ${deps.config.bodyLimitBytes} bytes`),
        c,
      ),
    ),
  )
  app.use('/v1/*', authenticate(deps.db.orm, deps.tokens))
  app.use('/metrics', requireMetricsToken(deps.config.metricsToken))
  const document = describeApi(app)

  const routes = app
    .route('/', healthRoutes(deps))
    .route('/', subagentRoutes(deps))
    .route('/', dispatchRoutes(deps))
    .route('/', workerRoutes(deps))
    .route('/', reportRoutes(deps))
    .route('/', tokenRoutes(deps))
    .route('/', webhookRoutes(deps))
    .route('/', metricsRoutes(deps.metrics))
  // a browser given the coordinator's address lands on the operator page, not on a JSON 404
  app.get('/', (c) => c.redirect('/ui', 303))
  app.route('/', uiRoutes(deps))
  app.route('/', docsRoutes())
  app.doc31('/openapi.json', document)
  app.notFound((c) =>
    answer(new ApiError(404, ErrorCode.NotFound, `no route ${c.req.method} ${c.req.path}`), c),
  )
  app.onError(answer)
  return routes
}

export type AppType = ReturnType<typeof createApp>
