// The operator page in-process: sign-in and its session, the page's headers, and what each page shows.
// (test/coordinator/ui/browser.test.ts drives the same pages in a real browser.)
import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import type { Role } from '../../../src/contract/index.js'
import { createToken } from '../../../src/coordinator/http/auth.js'
import { type TestApp, tokens, useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'
import { ORIGIN, send as sendTo, signIn as signInTo } from '../../support/ui.js'

const h = useTestApp()

const send = (path: string, init: Parameters<typeof sendTo>[2] = {}, app: TestApp = h) =>
  sendTo(app, path, init)
const signIn = (token = tokens.operator, app: TestApp = h) => signInTo(app, token)

describe('signing in', () => {
  it('sends a page without a session to sign in, and back to it after', async () => {
    const res = await send('/ui/drift?since=2026-01-01T00:00:00Z')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(
      `/ui/sign-in?next=${encodeURIComponent('/ui/drift?since=2026-01-01T00:00:00Z')}`,
    )
    const form = await send(res.headers.get('location') as string)
    expect(form.text).toContain('value="/ui/drift?since=2026-01-01T00:00:00Z"')
  })

  it('keeps the session in an HttpOnly, SameSite=Strict cookie for /ui, never the token', async () => {
    const res = await send('/ui/sign-in', { form: { token: tokens.operator, next: '/ui/drift' } })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/ui/drift')
    const cookie = res.headers.get('set-cookie') as string
    expect(cookie).toMatch(/^preflight_session=[\w-]{43};/)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    expect(cookie).toContain('Path=/ui')
    expect(cookie).not.toContain(tokens.operator)
    // the database holds the id's hash only
    const id = cookie.slice('preflight_session='.length, cookie.indexOf(';'))
    const stored = await h.t.db.orm.execute(sql`SELECT session_hash FROM ui_sessions`)
    expect(JSON.stringify(stored)).not.toContain(id)
  })

  it('marks the cookie Secure when the request came over TLS', async () => {
    const res = await h.app.request('https://localhost/ui/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://localhost' },
      body: new URLSearchParams({ token: tokens.operator }).toString(),
    })
    expect(res.headers.get('set-cookie')).toContain('Secure')
  })

  it.each([
    ['an unknown token', 'no-such-token-0123456789abcdef'],
    ['a worker token', tokens.worker],
    ['nothing', ''],
  ])('refuses %s with 401 and no cookie', async (_what, token) => {
    const res = await send('/ui/sign-in', { form: { token } })
    expect(res.status).toBe(401)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect(res.text).toContain('unknown, revoked, expired')
  })

  it('lets an admin token in', async () => {
    expect(await signIn(tokens.admin)).toMatch(/^preflight_session=/)
  })

  // the page shows a role what the API lets it read: dispatches to an orchestrator, reports (drift) not
  it('lets an orchestrator token in to failures and dispatches, and refuses it drift as the API does', async () => {
    const cookie = await signIn(tokens.orchestrator)
    const failures = await send('/ui/failures', { cookie })
    expect(failures.status).toBe(200)
    expect(failures.text).not.toContain('href="/ui/drift"')
    const api = await h.call('GET', '/v1/reports/summary', { role: 'orchestrator' })
    expect(api.status).toBe(403)
    const drift = await send('/ui/drift', { cookie })
    expect(drift.status).toBe(403)
    expect(drift.text).toContain(`<code>forbidden</code> ${api.body.error.message}`)
  })

  it('refuses a form posted from another site', async () => {
    const res = await h.app.request(`${ORIGIN}/ui/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ token: tokens.operator }).toString(),
    })
    expect(res.status).toBe(403)
    expect(res.headers.get('set-cookie')).toBeNull()
    // the app's answer to it, as a page
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(await res.text()).toContain('<code>forbidden</code>')
  })

  it.each([
    'https://evil.example/',
    '//evil.example/ui',
    '/ui/../v1/tokens',
    '/other',
    '/ui\\@evil.example',
    '/uievil',
  ])('never sends a signed-in operator away from /ui (next=%s)', async (next) => {
    const res = await send('/ui/sign-in', { form: { token: tokens.operator, next } })
    expect(res.headers.get('location')).toBe('/ui/failures')
  })

  it('ends the session on sign-out', async () => {
    const cookie = await signIn()
    expect((await send('/ui/drift', { cookie })).status).toBe(200)
    const out = await send('/ui/sign-out', { form: {}, cookie })
    expect(out.status).toBe(303)
    expect(out.headers.get('set-cookie')).toMatch(/preflight_session=;.*Max-Age=0/)
    expect((await send('/ui/drift', { cookie })).status).toBe(303)
  })

  it('ends the session when its token is revoked', async () => {
    const token = await mint(h, 'operator')
    const cookie = await signIn(token.token)
    expect((await send('/ui/drift', { cookie })).status).toBe(200)
    expect((await h.call('DELETE', `/v1/tokens/${token.id}`)).status).toBeLessThan(300)
    expect((await send('/ui/drift', { cookie })).status).toBe(303)
  })

  it('ends the session when its token is given another role', async () => {
    const token = await mint(h, 'operator')
    const cookie = await signIn(token.token)
    await h.t.db.orm.execute(sql`UPDATE api_tokens SET role = 'worker' WHERE id = ${token.id}`)
    expect((await send('/ui/drift', { cookie })).status).toBe(303)
  })

  it('ends the session at its expiry', async () => {
    const cookie = await signIn()
    await h.t.db.orm.execute(sql`UPDATE ui_sessions SET expires_at = now() - interval '1 second'`)
    expect((await send('/ui/drift', { cookie })).status).toBe(303)
  })

  it('answers a POST without a session with 401, not a redirect', async () => {
    expect((await send('/ui/drift', { form: {} })).status).toBe(401)
  })
})

describe('every page', () => {
  it('loads nothing but its own style sheet, runs no script, and is never cached', async () => {
    const cookie = await signIn()
    for (const path of ['/ui/sign-in', '/ui/drift']) {
      const res = await send(path, { cookie })
      const csp = res.headers.get('content-security-policy') as string
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("style-src 'self'")
      expect(csp).not.toContain('script-src')
      expect(csp).toContain("frame-ancestors 'none'")
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(res.text).toMatch(/^<!doctype html><html lang="en">/)
      expect(res.text).not.toMatch(/<script|style="|https?:\/\/(?!localhost)/)
    }
    const css = await send('/ui/style.css')
    expect(css.headers.get('content-type')).toContain('text/css')
    expect(css.text).toContain('prefers-color-scheme: dark')
  })

  it('leaves the API alone: no page headers, no form bound, no origin check', async () => {
    const res = await h.app.request(`${ORIGIN}/v1/subagents`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.admin}`,
        'content-type': 'application/json',
        origin: 'https://elsewhere.example',
      },
      body: JSON.stringify({
        ...definition('ui-api-alone'),
        description: 'x'.repeat(4000),
      }),
    })
    expect(res.status, await res.text()).toBe(201)
    expect(res.headers.get('content-security-policy')).toBeNull()
    const unknown = await h.app.request(`${ORIGIN}/v1/nothing`, {
      headers: { authorization: `Bearer ${tokens.admin}` },
    })
    expect(unknown.status).toBe(404)
    expect(unknown.headers.get('content-security-policy')).toBeNull()
  })

  // 16 KiB: a cancel's reason of 1,024 characters, percent-encoded UTF-8, fits
  it('bounds a posted form', async () => {
    const res = await send('/ui/sign-in', { form: { token: 'x'.repeat(17_000) } })
    expect(res.status).toBe(413)
  })
})

describe('the dispatch page', () => {
  it('shows each requirement with what the worker saw, unmet first, and the completion', async () => {
    const def = definition('ui-dispatch')
    const id = await queueDispatch(h, def)
    const c = await claim(h)
    const report = reportFor(def)
    const node = report.results.find((r) => r.requirement === 'node')
    if (!node) throw new Error('no node requirement')
    Object.assign(node, {
      status: 'unmet',
      reason: 'not-found',
      observed: { name: 'node', searched: ['/usr/local/bin', '/opt/tools/bin'], rejected: [] },
    })
    report.outcome = 'unmet'
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body: { ...fenceOf(c), report } })
    const res = await send(`/ui/dispatches/${id}`, { cookie: await signIn() })
    expect(res.status).toBe(200)
    expect(res.text).toContain('preflight_failed')
    const rows = res.text.slice(res.text.indexOf('<tbody>'))
    expect(rows.indexOf('<code>node</code>')).toBeLessThan(rows.indexOf('<code>git</code>'))
    expect(res.text).toContain('<code>/opt/tools/bin</code>')
    // the code, with what `preflight explain not-found` says it means on hover
    expect(res.text).toContain('<abbr title="No executable regular file of that name on the agent')
    expect(res.text).toContain('>not-found</abbr>')
  })

  it('shows why setup failed with its output tail', async () => {
    const id = await queueDispatch(h, definition('ui-setup'))
    const c = await claim(h)
    const detail = 'sh preflight-setup.sh exited 3 (exit); last output:\nnpm ERR! <missing> & gone'
    const done = await h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), status: 'setup_failed', reason: 'setup-exit', detail },
    })
    expect(done.status).toBe(200)
    const res = await send(`/ui/dispatches/${id}`, { cookie: await signIn() })
    expect(res.text).toContain('setup_failed')
    // escaped, never markup
    expect(res.text).toContain('npm ERR! &lt;missing&gt; &amp; gone')
    // the reason written out: what it means and what to look at, as `preflight explain setup-exit`
    expect(res.text).toContain(
      'Reason: <code>setup-exit</code> — `workspace.setup` (or `preflight-setup.sh`) exited non-zero.',
    )
    expect(res.text).toContain('Look at: The output tail.')
  })

  it("shows a failed agent's output tail", async () => {
    const def = definition('ui-agent-failed')
    const id = await queueDispatch(h, def)
    const c = await claim(h)
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(def) },
    })
    const detail = 'to stdout\npanic: <config> & gone'
    const done = await h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), exitCode: 3, durationMs: 40, detail },
    })
    expect(done.status).toBe(200)
    const res = await send(`/ui/dispatches/${id}`, { cookie: await signIn() })
    expect(res.text).toContain('<h2 id="output">Agent output</h2>')
    // escaped, never markup
    expect(res.text).toContain('<pre>to stdout\npanic: &lt;config&gt; &amp; gone</pre>')
  })

  it.each(['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '%27%3B--'])(
    'answers an unknown dispatch (%s) with a 404 page',
    async (id) => {
      const res = await send(`/ui/dispatches/${id}`, { cookie: await signIn() })
      expect(res.status).toBe(404)
      expect(res.text).toContain('No dispatch')
    },
  )
})

describe('the failures page', () => {
  it('lists setup and preflight failures with why they ended, newest first, and filters by subagent', async () => {
    const def = definition('ui-failing')
    const setupFailed = await queueDispatch(h, def)
    let c = await claim(h)
    const body = {
      ...fenceOf(c),
      status: 'setup_failed',
      reason: 'setup-exit',
      detail: 'exited 2; last output:\nno pnpm',
    }
    await h.call('POST', `/v1/dispatches/${setupFailed}/complete`, { role: 'worker', body })
    const unmet = await queueDispatch(h, def)
    c = await claim(h)
    await h.call('PUT', `/v1/dispatches/${unmet}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: reportFor(def, 'unmet') },
    })
    const cookie = await signIn()
    const res = await send('/ui/failures?subagent=ui-failing', { cookie })
    expect(res.status).toBe(200)
    expect(res.text.indexOf(unmet.slice(0, 8))).toBeLessThan(res.text.indexOf(setupFailed.slice(0, 8)))
    expect(res.text).toMatch(/setup: <abbr title="[^"]+">setup-exit<\/abbr>/)
    expect(res.text).toMatch(/exec <code>node<\/code>: unmet \(<abbr title="[^"]+">not-found<\/abbr>\)/)
    expect(res.text).toContain(`href="/ui/dispatches/${unmet}"`)
    const other = await send('/ui/failures?subagent=someone-else', { cookie })
    expect(other.text).not.toContain(unmet.slice(0, 8))
    expect(other.text).toContain('No failed dispatch matches')
  })

  it.each([
    ['since=yesterday', 'since'],
    ['status=succeeded', 'status'],
    ['cursor=nonsense', 'cursor'],
  ])('says what is wrong with %s instead of failing', async (query, says) => {
    const res = await send(`/ui/failures?${query}`, { cookie: await signIn() })
    expect(res.status).toBe(400)
    expect(res.text).toContain('role="alert"')
    expect(res.text).toContain(says)
  })
})

describe('the drift page', () => {
  it('shows a requirement that held and then failed as drifting, first', async () => {
    const def = definition('ui-drift')
    for (const status of ['met', 'unmet'] as const) {
      const id = await queueDispatch(h, def)
      const c = await claim(h)
      const body = { ...fenceOf(c), report: reportFor(def, status) }
      expect((await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body })).status).toBe(
        200,
      )
    }
    const res = await send('/ui/drift', { cookie: await signIn() })
    expect(res.status).toBe(200)
    expect(res.text).toMatch(
      /<tr class="drifting"><td data-label="subagent"><a href="\/ui\/failures\?subagent=ui-drift">/,
    )
    expect(res.text).toContain('drifting since')
  })

  it('says what is wrong with a bad window instead of failing', async () => {
    const res = await send('/ui/drift?since=yesterday', { cookie: await signIn() })
    expect(res.status).toBe(400)
    expect(res.text).toContain('role="alert"')
    expect(res.text).toContain('since')
  })
})

// The pages answer what the API would (the same status, code and message, through the app's one error
// handling), as HTML a browser shows, never the JSON envelope or a stack.
describe('errors on a page', () => {
  it.each([
    ['/ui/failures', '/v1/dispatches'],
    ['/ui/drift', '/v1/reports/summary'],
  ])('answers a bad query of %s with the code and message the API (%s) gives it', async (page, api) => {
    const query = '?since=yesterday'
    const json = await h.call('GET', `${api}${query}`, { role: 'operator' })
    expect(json.status).toBe(400)
    expect(json.body.error.code).toBe('invalid-request')
    const res = await send(`${page}${query}`, { cookie: await signIn() })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.text).toContain(`<code>invalid-request</code> ${json.body.error.message}`)
    // the form stays, with what was asked, to be put right
    expect(res.text).toContain('value="yesterday"')
  })

  it('answers a path no page has with a 404 page, not the envelope', async () => {
    const res = await send('/ui/no-such-page', { cookie: await signIn() })
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.text).toContain('<code>not-found</code>')
  })
})

describe('an unexpected error on a page', () => {
  // its own database: the test takes a table away (and puts it back) under the page
  const broken = useTestApp()

  it("gets the app's 500: code internal, as a page, with nothing of the error in it", async () => {
    const cookie = await signIn(tokens.operator, broken)
    await broken.t.db.orm.execute(sql`ALTER TABLE dispatches RENAME TO dispatches_away`)
    try {
      const res = await send('/ui/failures', { cookie }, broken)
      expect(res.status).toBe(500)
      expect(res.headers.get('content-type')).toContain('text/html')
      expect(res.text).toContain('<code>internal</code> internal error')
      expect(res.text).not.toMatch(/dispatches|relation|at .*\.(ts|js):\d+/)
    } finally {
      await broken.t.db.orm.execute(sql`ALTER TABLE dispatches_away RENAME TO dispatches`)
    }
  })
})

const mint = (app: TestApp, role: Role) => createToken(app.t.db.orm, role)

// The page's routes are counted and logged by their own pattern, as the API's are: its middleware for
// /ui/* matches every page too, and was taken for the route ("unmatched").
describe('the page in /metrics', () => {
  it('counts each page by its route, and only a path no page has as unmatched', async () => {
    const cookie = await signIn()
    expect((await send('/ui/failures', { cookie })).status).toBe(200)
    expect((await send('/ui/no-such-page', { cookie })).status).toBe(404)
    const text = await (await h.app.request('/metrics')).text()
    const routes = [...text.matchAll(/^preflight_http_request_duration_seconds_count\{([^}]*)\}/gm)].map(
      (m) => m[1],
    )
    expect(routes).toContain('method="GET",route="/ui/failures",status="200"')
    expect(routes).toContain('method="POST",route="/ui/sign-in",status="303"')
    expect(routes).toContain('method="GET",route="unmatched",status="404"')
  })
})
