// Bearer-token authentication and role checks. Tokens are random and stored as sha256 hashes.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import { Role } from './contract/api.js'
import type { Orm } from './db/client.js'
import { findTokenRole, insertToken } from './db/tokens.js'
import { ApiError, ErrorCode } from './errors.js'
import type { AppEnv } from './http.js'

export const MIN_TOKEN_LENGTH = 16

export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

const generateToken = () => `pft_${randomBytes(32).toString('base64url')}`

// Mints a token, stores its hash and returns the token (shown once, never stored).
export async function createToken(db: Orm, role: Role, label?: string): Promise<string> {
  const token = generateToken()
  await insertToken(db, hashToken(token), role, label)
  return token
}

// Parses PREFLIGHT_BOOTSTRAP_TOKENS="role:token,role:token"; throws a one-sentence Error when malformed.
export function parseBootstrapTokens(spec: string): { role: Role; token: string }[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((entry) => {
      const at = entry.indexOf(':')
      const role = Role.safeParse(entry.slice(0, Math.max(at, 0)))
      const token = entry.slice(at + 1)
      if (at < 1 || !role.success) {
        throw new Error(
          `PREFLIGHT_BOOTSTRAP_TOKENS: "${entry.slice(0, 20)}…" is not role:token with a role of ${Role.options.join(', ')}`,
        )
      }
      if (token.length < MIN_TOKEN_LENGTH) {
        throw new Error(
          `PREFLIGHT_BOOTSTRAP_TOKENS: the ${role.data} token must be at least ${MIN_TOKEN_LENGTH} characters`,
        )
      }
      return { role: role.data, token }
    })
}

export async function seedTokens(db: Orm, tokens: { role: Role; token: string }[]): Promise<void> {
  for (const t of tokens) await insertToken(db, hashToken(t.token), t.role, 'bootstrap')
}

// Resolves `Authorization: Bearer <token>` to a role (401 when missing or unknown).
export function authenticate(db: Orm, cacheMs: number): MiddlewareHandler<AppEnv> {
  const cache = new Map<string, { role: Role; until: number }>()
  return async (c, next) => {
    const match = /^Bearer ([^\s]+)$/i.exec(c.req.header('authorization') ?? '')
    if (!match?.[1]) throw new ApiError(401, ErrorCode.Unauthorized, 'send Authorization: Bearer <token>')
    const hash = hashToken(match[1])
    const hit = cache.get(hash)
    let role = hit && hit.until > Date.now() ? hit.role : undefined
    if (!role) {
      role = await findTokenRole(db, hash)
      if (!role) throw new ApiError(401, ErrorCode.Unauthorized, 'unknown token')
      if (cache.size > 10_000) cache.clear()
      cache.set(hash, { role, until: Date.now() + cacheMs })
    }
    c.set('role', role)
    await next()
  }
}

// Lets the given roles (and admin) through; anyone else gets 403.
export function requireRole(...roles: Role[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const role = c.get('role')
    if (role !== 'admin' && !roles.includes(role)) {
      throw new ApiError(403, ErrorCode.Forbidden, `this route needs the role ${roles.join(' or ')}`)
    }
    await next()
  }
}

// GET /metrics behind one fixed token (PREFLIGHT_METRICS_TOKEN) when one is set, open otherwise. Checked
// in the process, without the database: a scrape works, and costs nothing, whatever the database does.
export function requireMetricsToken(token: string | undefined): MiddlewareHandler<AppEnv> {
  if (!token) return (_c, next) => next()
  const want = createHash('sha256').update(token, 'utf8').digest()
  return async (c, next) => {
    const match = /^Bearer ([^\s]+)$/i.exec(c.req.header('authorization') ?? '')
    const got = createHash('sha256')
      .update(match?.[1] ?? '', 'utf8')
      .digest()
    if (!match || !timingSafeEqual(got, want)) {
      throw new ApiError(401, ErrorCode.Unauthorized, 'send Authorization: Bearer <the metrics token>')
    }
    await next()
  }
}
