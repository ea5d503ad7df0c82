// The operator page at /ui: server-rendered HTML (Hono's JSX), readable without JavaScript, with a
// Content-Security-Policy that lets the page load nothing but its own style sheet. Sign-in is a form
// (session.ts says how the session is kept); every other page needs a session. Queries are checked and
// errors answered as the API does (the same status, code and message), shown as a page.
import { type Context, Hono } from 'hono'
import { csrf } from 'hono/csrf'
import { html } from 'hono/html'
import type { Child } from 'hono/jsx'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { z } from 'zod'
import { DispatchesQuery, FAILURE_STATUSES, SummaryQuery } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { listDispatches } from '../db/dispatch-list.js'
import { findDispatch } from '../db/dispatches.js'
import { summarise } from '../db/summary.js'
import { limitBody } from '../http/body-limit.js'
import { ApiError, ErrorCode } from '../http/errors.js'
import { type AppEnv, answerError, invalidInput } from '../http/http.js'
import { DispatchPage } from './dispatch-page.js'
import { DriftPage } from './drift-page.js'
import { FailuresPage } from './failures-page.js'
import { ErrorBox, Page } from './layout.js'
import { requireSession, safeNext, signIn, signOut } from './session.js'
import { STYLE } from './style.js'

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
// a sign-in form holds one token and a path
const FORM_LIMIT_BYTES = 4096

// A path of the operator page: its errors are answered as a page (app.ts), the API's as the envelope.
export const isPage = (path: string) => path === '/ui' || path.startsWith('/ui/')

// The routes of /ui, without an onError of their own: what they throw is the app's one onError's.
export function uiRoutes(deps: Pick<Deps, 'db'>) {
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
      <SignIn next={next} error="That token is unknown, revoked, expired, or not an operator's." />,
      401,
    )
  })
  ui.post('/ui/sign-out', async (c) => {
    await signOut(c, deps)
    return c.redirect('/ui/sign-in', 303)
  })

  ui.use('/ui/*', requireSession(deps))
  ui.get('/ui/failures', async (c) => {
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
      return page(c, <FailuresPage items={[]} filters={filters} error={error} />, error.status)
    }
    const { items, nextCursor } = await listDispatches(deps.db.orm, query.data)
    const next = nextCursor ? `/ui/failures?${params({ ...filters, cursor: nextCursor })}` : undefined
    return page(c, <FailuresPage items={items} filters={filters} next={next} />)
  })
  ui.get('/ui/dispatches/:id', async (c) => {
    const id = z.uuid().safeParse(c.req.param('id'))
    const d = id.success ? await findDispatch(deps.db.orm, id.data) : undefined
    if (!d) throw new ApiError(404, ErrorCode.NotFound, `No dispatch ${c.req.param('id')}.`)
    return page(c, <DispatchPage d={d} />)
  })
  ui.get('/ui/drift', async (c) => {
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
  return page(
    c,
    <Page title="Not shown">
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
          Operator token
          <input name="token" type="password" autocomplete="off" required autofocus />
        </label>
        <input type="hidden" name="next" value={next} />
        <button type="submit">Sign in</button>
        <p class="note">
          The token is checked once; the browser then keeps only a session cookie, which ends when you sign
          out, after eight hours, or when the token is revoked.
        </p>
      </form>
    </Page>
  )
}

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
