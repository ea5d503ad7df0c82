// The operator page at /ui: server-rendered HTML (Hono's JSX), readable without JavaScript, with a
// Content-Security-Policy that lets the page load nothing but its own style sheet. Sign-in is a form
// (session.ts says how the session is kept); every other page needs a session, and shows and does what
// the session's role may in the API: failures and dispatches for an operator or an orchestrator, drift
// (the reports') for an operator, cancel and retry for an orchestrator (admin: all). Queries and forms
// are checked and errors answered as the API does (the same status, code and message), shown as a page.
import { randomUUID } from 'node:crypto'
import { type Context, Hono } from 'hono'
import { csrf } from 'hono/csrf'
import { html } from 'hono/html'
import type { Child } from 'hono/jsx'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { z } from 'zod'
import {
  CancelRequest,
  DispatchesQuery,
  FAILURE_STATUSES,
  RetryRequest,
  type Role,
  SummaryQuery,
} from '../../contract/index.js'
import { listDispatches } from '../db/dispatch-list.js'
import { findDispatch } from '../db/dispatches.js'
import { countByStatus } from '../db/status-counts.js'
import { summarise } from '../db/summary.js'
import { requireRole } from '../http/auth.js'
import { limitBody } from '../http/body-limit.js'
import { ApiError, ErrorCode } from '../http/errors.js'
import { type AppEnv, answerError, invalidInput } from '../http/http.js'
import { type ActionDeps, cancelAndTell, retryAndTell } from '../routes/dispatch-actions.js'
import { DispatchPage } from './dispatch-page.js'
import { DriftPage } from './drift-page.js'
import { FailuresPage } from './failures-page.js'
import { ErrorBox, Page } from './layout.js'
import { requireSession, safeNext, signIn, signOut } from './session.js'
import { STYLE } from './style.js'

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
// a sign-in form holds one token and a path; a cancel's, a reason of up to 1,024 characters, each up to
// 12 bytes once UTF-8 is percent-encoded
const FORM_LIMIT_BYTES = 16 * 1024

// A path of the operator page: its errors are answered as a page (app.ts), the API's as the envelope.
export const isPage = (path: string) => path === '/ui' || path.startsWith('/ui/')

// The routes of /ui, without an onError of their own: what they throw is the app's one onError's.
export function uiRoutes(deps: ActionDeps) {
  const ui = new Hono<AppEnv>()
  // mounted at the app's root: every middleware names /ui, or it would apply to the API as well
  for (const path of ['/ui', '/ui/*']) {
    ui.use(path, async (c, next) => {
      await next()
      c.header('content-security-policy', CSP)
      // pages show what operators see: never kept by a browser or a proxy
      if (c.req.path !== '/ui/style.css') c.header('cache-control', 'no-store')
    })
    // a form posted from another site is refused (its Origin is not the coordinator's)
    ui.use(path, csrf())
    ui.use(
      path,
      limitBody(FORM_LIMIT_BYTES, (c) =>
        renderPageError(new ApiError(413, ErrorCode.PayloadTooLarge, 'the form is too large'), c),
      ),
    )
  }

  ui.get('/ui', (c) => c.redirect('/ui/failures', 303))
  ui.get('/ui/style.css', (c) => {
    c.header('content-type', 'text/css; charset=utf-8')
    c.header('cache-control', 'public, max-age=3600')
    return c.body(STYLE)
  })

  ui.get('/ui/sign-in', (c) => page(c, <SignIn next={safeNext(c.req.query('next'))} />))
  ui.post('/ui/sign-in', async (c) => {
    const form = await c.req.parseBody()
    const next = safeNext(typeof form.next === 'string' ? form.next : undefined)
    const token = typeof form.token === 'string' ? form.token.trim() : ''
    if (token !== '' && (await signIn(c, deps, token))) return c.redirect(next, 303)
    return page(
      c,
      <SignIn
        next={next}
        error="That token is unknown, revoked, expired, or not an operator's, an orchestrator's or an admin's."
      />,
      401,
    )
  })
  ui.post('/ui/sign-out', async (c) => {
    await signOut(c, deps)
    return c.redirect('/ui/sign-in', 303)
  })

  ui.use('/ui/*', requireSession(deps))
  ui.get('/ui/failures', async (c) => {
    const role = c.get('role')
    const refresh = c.req.query('refresh') === 'on'
    const filters = {
      status: c.req.query('status') ?? '',
      subagent: c.req.query('subagent') ?? '',
      reason: c.req.query('reason') ?? '',
      since: c.req.query('since') ?? '',
      until: c.req.query('until') ?? '',
    }
    const query = DispatchesQuery.safeParse({
      ...withoutEmpty({ ...filters, cursor: c.req.query('cursor') }),
      // every kind of failure unless one is asked for
      status: filters.status === '' ? [...FAILURE_STATUSES] : filters.status,
    })
    const failed = query.success && query.data.status?.every((s) => FAILURE_STATUSES.includes(s as never))
    if (!query.success || !failed) {
      const error = query.success ? notAFailure() : invalidInput(query.error, 'query')
      const props = { items: [], filters, error, role, refresh }
      return page(c, <FailuresPage {...props} />, error.status)
    }
    const [{ items, nextCursor }, byStatus] = await Promise.all([
      listDispatches(deps.db.orm, query.data),
      countByStatus(deps.db.orm),
    ])
    const more = { ...filters, cursor: nextCursor ?? '', refresh: refresh ? 'on' : '' }
    const next = nextCursor ? `/ui/failures?${params(more)}` : undefined
    const counts = new Map([...byStatus].map(([status, { n }]) => [status, n]))
    const cursor = c.req.query('cursor')
    const props = { items, filters, counts, next, role, refresh, cursor }
    return page(c, <FailuresPage {...props} />)
  })
  ui.get('/ui/dispatches/:id', async (c) => {
    const d = await findDispatch(deps.db.orm, dispatchId(c))
    if (!d) throw noDispatch(c)
    const role = c.get('role')
    // the form's own key: a form sent twice queues one retry (keys are the coordinator's one namespace)
    const actions = mayAct(role) ? { retryKey: `ui-retry:${randomUUID()}` } : undefined
    const refresh = c.req.query('refresh') === 'on'
    return page(c, <DispatchPage d={d} role={role} actions={actions} refresh={refresh} />)
  })
  // The actions answer as the API's cancel and retry (their codes and messages), then show the dispatch.
  ui.post('/ui/dispatches/:id/cancel', requireRole('orchestrator'), async (c) => {
    const id = dispatchId(c)
    const form = await c.req.parseBody()
    const reason = typeof form.reason === 'string' ? form.reason.trim() : ''
    const body = CancelRequest.safeParse(reason === '' ? {} : { reason })
    if (!body.success) throw invalidInput(body.error, 'form')
    const by = { tokenId: c.get('tokenId') ?? null, role: c.get('role') }
    await cancelAndTell(deps, id, { by, ...body.data })
    return c.redirect(`/ui/dispatches/${id}`, 303)
  })
  ui.post('/ui/dispatches/:id/retry', requireRole('orchestrator'), async (c) => {
    const id = dispatchId(c)
    const form = await c.req.parseBody()
    const key = typeof form.idempotencyKey === 'string' ? form.idempotencyKey : ''
    const body = RetryRequest.safeParse(key === '' ? {} : { idempotencyKey: key })
    if (!body.success) throw invalidInput(body.error, 'form')
    const { dispatch } = await retryAndTell(deps, id, body.data)
    return c.redirect(`/ui/dispatches/${dispatch.id}`, 303)
  })
  ui.get('/ui/drift', requireRole('operator'), async (c) => {
    const since = c.req.query('since') ?? ''
    const until = c.req.query('until') ?? ''
    const query = SummaryQuery.safeParse(withoutEmpty({ since, until, cursor: c.req.query('cursor') }))
    if (!query.success) {
      const error = invalidInput(query.error, 'query')
      return page(c, <DriftPage items={[]} since={since} until={until} error={error} />, error.status)
    }
    const { items, nextCursor } = await summarise(deps.db.orm, query.data)
    const next = nextCursor ? `/ui/drift?${params({ since, until, cursor: nextCursor })}` : undefined
    return page(c, <DriftPage items={items} since={since} until={until} next={next} />)
  })
  return ui
}

// What was thrown, answered as the API answers it (a database outage is 503 with Retry-After, anything
// unexpected 500 `internal` with no stack: the access log records the error), as a page.
export function renderPageError(err: unknown, c: Context): Response | Promise<Response> {
  const e = answerError(err, c)
  // the session's, when it was read before the error
  const role: Role | undefined = c.get('role')
  return page(
    c,
    <Page title="Not shown" role={role}>
      <ErrorBox problem={e} />
    </Page>,
    e.status,
  )
}

function page(c: Context, body: Child, status = 200) {
  return c.html(html`<!doctype html>${body}`, status as ContentfulStatusCode)
}

function SignIn({ next, error }: { next: string; error?: string }) {
  return (
    <Page title="Sign in" signedIn={false}>
      <form class="signin" method="post" action="/ui/sign-in">
        {error && <ErrorBox problem={{ message: error }} />}
        <label>
          Token
          <input name="token" type="password" autocomplete="off" required autofocus />
        </label>
        <input type="hidden" name="next" value={next} />
        <button type="submit">Sign in</button>
        <p class="note">
          An operator's token shows failures, dispatches and drift; an orchestrator's shows failures and
          dispatches, and may cancel and retry them; an admin's does all. The token is checked once; the
          browser then keeps only a session cookie, which ends when you sign out, after eight hours, or when
          the token is revoked.
        </p>
      </form>
    </Page>
  )
}

// The {id} of a dispatch's page; one that is no dispatch id is answered as a dispatch not found.
function dispatchId(c: Context): string {
  const id = z.uuid().safeParse(c.req.param('id'))
  if (!id.success) throw noDispatch(c)
  return id.data
}

const noDispatch = (c: Context) => new ApiError(404, ErrorCode.NotFound, `No dispatch ${c.req.param('id')}.`)

// Whether the session may cancel and retry: the API's rule for them (an orchestrator, or admin).
const mayAct = (role: Role) => role === 'orchestrator' || role === 'admin'

// The failures page lists failures only: another status is refused as a bad value of the query.
function notAFailure(): ApiError {
  return new ApiError(400, ErrorCode.InvalidRequest, 'invalid query: status: pick one of the failures')
}

function withoutEmpty(query: Record<string, string | undefined>) {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== ''))
}

export function params(query: Record<string, string | undefined>): string {
  return new URLSearchParams(withoutEmpty(query) as Record<string, string>).toString()
}
