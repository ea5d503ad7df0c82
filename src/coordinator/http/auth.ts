// Bearer-token authentication and role checks. Tokens are random and stored as sha256 hashes.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import type { Role } from '../../contract/index.js'
import type { Orm } from '../db/client.js'
import {
  deleteBootstrapTokensExcept,
  findActiveToken,
  insertToken,
  type NewToken,
  upsertBootstrapToken,
} from '../db/tokens.js'
import { ApiError, ErrorCode } from './errors.js'
import type { AppEnv } from './http.js'
import type { Principal, TokenCache } from './token-cache.js'

export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

const generateToken = () => `pft_${randomBytes(32).toString('base64url')}`

// Mints a token, stores its hash and returns the token (shown once, never stored) with its id.
export async function createToken(db: Orm, role: Role, opts: NewToken = {}) {
  const token = generateToken()
  const view = await insertToken(db, hashToken(token), role, opts)
  return { id: view.id, token, view }
}

// Makes the bootstrap tokens exactly these: each is seeded (a revoked one stays revoked), and those
// seeded by an earlier start but no longer listed are deleted. `notify`: tell running coordinators.
export async function syncBootstrapTokens(
  db: Orm,
  tokens: { role: Role; token: string }[],
  opts: { notify: boolean } = { notify: false },
): Promise<{ dropped: number }> {
  const hashes = tokens.map((t) => hashToken(t.token))
  for (const [i, t] of tokens.entries()) await upsertBootstrapToken(db, hashes[i] as string, t.role)
  return { dropped: await deleteBootstrapTokensExcept(db, hashes, opts.notify) }
}

// Resolves `Authorization: Bearer <token>` to a role (401 when missing, unknown, revoked or expired).
export function authenticate(db: Orm, cache: TokenCache<Principal>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const match = /^Bearer ([^\s]+)$/i.exec(c.req.header('authorization') ?? '')
    if (!match?.[1]) throw new ApiError(401, ErrorCode.Unauthorized, 'send Authorization: Bearer <token>')
    const hash = hashToken(match[1])
    let who = cache.get(hash)
    if (!who) {
      const stamp = cache.stamp()
      const found = await findActiveToken(db, hash)
      if (!found) throw new ApiError(401, ErrorCode.Unauthorized, 'unknown, revoked or expired token')
      who = { role: found.role, tokenId: Number(found.id) }
      cache.set(hash, who, found.expires_ms === null ? null : Number(found.expires_ms), stamp)
    }
    c.set('role', who.role)
    c.set('tokenId', who.tokenId)
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
