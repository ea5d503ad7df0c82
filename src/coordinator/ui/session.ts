// Sign-in for the operator page. The operator pastes an operator, orchestrator or admin token once (the
// session may see and do what the token's role may in the API: ui/routes.tsx); the coordinator answers
// with a random session id in a cookie that is HttpOnly (no script can read it), SameSite=Strict (no
// other site's page can send it) and scoped to /ui, and keeps only the id's sha256 with the token it
// was opened with. So the token itself is never kept by the browser, signing out or revoking the token
// ends the session at once, and a copied database holds no usable session.
import { randomBytes } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { Role } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { deleteSession, findSession, insertSession } from '../db/sessions.js'
import { hashToken } from '../http/auth.js'
import { ApiError, ErrorCode } from '../http/errors.js'
import type { AppEnv } from '../http/http.js'

export const COOKIE = 'preflight_session'
// A working day: an operator signs in again the next morning.
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000
const ROLES: readonly Role[] = ['operator', 'orchestrator', 'admin']

// Opens a session for the token; false when the token is unknown, revoked, expired or of another role.
export async function signIn(c: Context, deps: Pick<Deps, 'db'>, token: string): Promise<boolean> {
  const id = randomBytes(32).toString('base64url')
  const opened = await insertSession(deps.db.orm, hashToken(id), hashToken(token), ROLES, SESSION_TTL_MS)
  if (!opened) return false
  setCookie(c, COOKIE, id, {
    path: '/ui',
    httpOnly: true,
    sameSite: 'Strict',
    // only over TLS when the request came over it (directly or through a proxy that says so)
    secure: isHttps(c),
    maxAge: SESSION_TTL_MS / 1000,
  })
  return true
}

export async function signOut(c: Context, deps: Pick<Deps, 'db'>): Promise<void> {
  const id = getCookie(c, COOKIE)
  if (id) await deleteSession(deps.db.orm, hashToken(id))
  deleteCookie(c, COOKIE, { path: '/ui', secure: isHttps(c) })
}

// Pages need a live session: without one, a GET is sent to sign in (and back), anything else is 401.
export function requireSession(deps: Pick<Deps, 'db'>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = getCookie(c, COOKIE)
    const session = id ? await findSession(deps.db.orm, hashToken(id), ROLES) : undefined
    if (!session) {
      if (c.req.method !== 'GET') throw new ApiError(401, ErrorCode.Unauthorized, 'sign in first')
      const back = new URL(c.req.url)
      return c.redirect(`/ui/sign-in?next=${encodeURIComponent(back.pathname + back.search)}`, 303)
    }
    c.set('role', session.role)
    // what the page does is the token's: a cancel says who, as the API's does
    c.set('tokenId', Number(session.token_id))
    await next()
  }
}

// Where to go after signing in: only a page of /ui itself, never another site (`//evil`, `/ui/../x`).
export function safeNext(next: string | undefined): string {
  if (!next || !/^\/ui(\/[\w\-/.%]*)?(\?[^#\\]*)?$/.test(next) || next.includes('..') || next.includes('//'))
    return '/ui/failures'
  return next
}

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https'
}
