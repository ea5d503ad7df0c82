// Shared pieces of the route files: the app's env type, a router whose validation failures are
// the error envelope, and helpers to declare JSON bodies and error responses in OpenAPI.

import type { ServerResponse } from 'node:http'
import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { matchedRoutes } from 'hono/route'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { z } from 'zod'
import { ErrorEnvelope, METADATA_PARAM, type Role } from '../../contract/index.js'
import { InvalidCursorError } from '../db/cursor.js'
import { errorCodes, isUnavailable, SOCKET_CODES } from '../db/unreachable.js'
import { DispatchError } from '../dispatch/errors.js'
import { requireRole } from './auth.js'
import type { Deadline } from './deadline.js'
import { ApiError, ErrorCode, fromDispatchError } from './errors.js'

export type AppEnv = {
  Variables: { role: Role; tokenId: number; requestId: string; deadline: Deadline }
}

export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw invalidInput(result.error, result.target)
    },
  })
}

// A request part (`query`, `json`, `param`, …) its schema refused, as the client is told: 400
// invalid-request with the issues in details. The operator pages validate their queries with it too.
export function invalidInput(error: z.ZodError, target: string): ApiError {
  const issues = error.issues.map((i) => ({ path: i.path, code: i.code, message: i.message }))
  // metadata (a body's, or a listing's metadata.<key> filter) out of its bounds has its own code
  const field = String(issues[0]?.path[0] ?? '')
  const code = field === 'metadata' || field.startsWith(METADATA_PARAM)
  return new ApiError(
    400,
    code ? ErrorCode.InvalidMetadata : ErrorCode.InvalidRequest,
    describe(issues, target),
    { target, issues },
  )
}

function describe(issues: { path: PropertyKey[]; message: string }[], target: string): string {
  const first = issues[0]
  if (!first) return `invalid ${target}`
  const where = first.path.length > 0 ? first.path.map(String).join('.') : target
  return `invalid ${target}: ${where}: ${first.message}`
}

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  content: { 'application/json': { schema } },
  required: true,
})

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
})

const errorResponse = (description: string) => jsonResponse(ErrorEnvelope, description)

// Error responses every authenticated route may answer, for the OpenAPI document.
const authErrors = {
  400: errorResponse(
    'invalid request (codes invalid-request, malformed-json, invalid-cursor, invalid-metadata)',
  ),
  401: errorResponse('missing or unknown bearer token (code unauthorized)'),
  403: errorResponse('the token’s role may not call this route (code forbidden)'),
  413: errorResponse('body over the limit (code payload-too-large)'),
  503: errorResponse(
    'the database is not reachable, or did not answer in time (codes unavailable, timeout); see Retry-After',
  ),
} as const

export { errorResponse }

// What every operation of the OpenAPI document says: a stable operationId (the method name a
// generated client gets) and a one-line summary.
type Described = Omit<RouteConfig, 'security' | 'middleware'> & { operationId: string; summary: string }

// A route anyone may call: `security: []` in the document, no token asked.
export const publicRoute = <const R extends Described>(route: R) => createRoute({ ...route, security: [] })

// A route behind a bearer token of one of `roles` (admin always; none listed: admin only): its
// security scheme, its role check and the error responses every authenticated route may answer.
export function authedRoute<const R extends Described>(roles: Role[], route: R) {
  return createRoute({
    ...route,
    security: [{ bearer: [] }],
    middleware: [requireRole(...roles)] as const,
    responses: { ...route.responses, ...authErrors },
  })
}

// Maps anything thrown to the envelope; never leaks a stack trace (a 500's error goes to the access
// log). A 503 says when to try again.
export function renderError(err: unknown, c: Context): Response {
  const e = answerError(err, c)
  const body: ErrorEnvelope = { error: { code: e.code, message: e.message } }
  if (e.details !== undefined) body.error.details = e.details
  return c.json(body, e.status as ContentfulStatusCode)
}

// What the client is told of anything thrown, whatever renders it (the envelope, or an operator page):
// its status, code and message, and when to try again after a 503 or a 429.
export function answerError(err: unknown, c: Context): ApiError {
  const e = toApiError(err)
  if (e.status === 503 || e.status === 429) c.header('retry-after', String(RETRY_AFTER_SECONDS))
  return e
}

// What a 503 tells the client: the database reconnects within about this long once it answers.
export const RETRY_AFTER_SECONDS = 1

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof DispatchError) return fromDispatchError(err)
  // A cursor this endpoint did not issue is bad input, never a 500.
  if (err instanceof InvalidCursorError) return new ApiError(400, ErrorCode.InvalidCursor, err.message)
  if (err instanceof HTTPException) return fromHttpException(err)
  if (isUnavailable(err))
    return new ApiError(503, ErrorCode.Unavailable, 'the database is not reachable; try again shortly')
  const pg = sqlState(err)
  if (pg?.startsWith('22'))
    return new ApiError(400, ErrorCode.InvalidValue, 'a value is not acceptable to the database')
  // 54xxx: a value too deep or too large for the database (e.g. nested JSON past its stack limit)
  if (pg?.startsWith('54'))
    return new ApiError(400, ErrorCode.InvalidValue, 'a value is too complex to store')
  if (pg === '23505') return new ApiError(409, ErrorCode.Conflict, 'a conflicting record exists')
  if (pg === '57014') return new ApiError(503, ErrorCode.Timeout, 'the database did not answer in time')
  return new ApiError(500, ErrorCode.Internal, 'internal error')
}

function fromHttpException(err: HTTPException): ApiError {
  if (err.status === 400 && /json/i.test(err.message)) {
    return new ApiError(400, ErrorCode.MalformedJson, 'the request body is not valid JSON')
  }
  if (err.status === 413) return new ApiError(413, ErrorCode.PayloadTooLarge, 'the request body is too large')
  if (err.status === 401) return new ApiError(401, ErrorCode.Unauthorized, err.message || 'unauthorized')
  // hono's csrf() refuses a form posted from another site (the operator pages)
  if (err.status === 403) return new ApiError(403, ErrorCode.Forbidden, err.message || 'refused')
  if (err.status < 500) return new ApiError(400, ErrorCode.InvalidRequest, err.message || 'bad request')
  return new ApiError(500, ErrorCode.Internal, 'internal error')
}

// SQLSTATE of a database error, also when wrapped (drizzle wraps driver errors in `cause`).
function sqlState(err: unknown): string | undefined {
  return errorCodes(err).find((code) => /^[0-9A-Z]{5}$/.test(code) && !SOCKET_CODES.has(code))
}

// jsonb cannot hold U+0000, but process output (a setup's output tail) can: string values keep their
// place as U+FFFD instead of failing the write. Keys are left alone (a NUL there is a 400).
// A body without NUL (nearly every one) is answered as it is, without copying it.
export function scrubNul<T>(value: T): T {
  return hasNul(value) ? scrubAll(value) : value
}

function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0')
  if (Array.isArray(value)) return value.some(hasNul)
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasNul)
  return false
}

function scrubAll<T>(value: T): T {
  if (typeof value === 'string') return (value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value) as T
  if (Array.isArray(value)) return value.map(scrubAll) as T
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubAll(v)])) as T
  }
  return value
}

// The pattern of the route that answered (`/v1/dispatches/:id`, never the path with its ids);
// `unmatched` when none did. The last matched route that is not a middleware's wildcard: a middleware
// registered after a handler (the page's session check, for every /ui/* after sign-in) matches too.
// Node's response to the request, on the server (@hono/node-server passes it); undefined in app.request().
export const outgoingOf = (c: Context): ServerResponse | undefined =>
  (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing

export function routeOf(c: Context): string {
  const routes = matchedRoutes(c)
  for (let i = routes.length - 1; i >= 0; i--) {
    const path = routes[i]?.path ?? '*'
    if (path !== '*' && !path.endsWith('/*')) return path
  }
  return 'unmatched'
}
