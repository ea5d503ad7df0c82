// API tokens: stored only as sha256 hashes, one role each; listed and revoked by id, never by secret.
// Changes that take a token away (revoke, a bootstrap token dropped) NOTIFY TOKENS_CHANNEL: every
// coordinator then forgets the tokens it had resolved (src/coordinator/http/token-cache.ts).
import { type SQL, sql } from 'drizzle-orm'
import type { Role, TokenPage, TokenView } from '../../contract/index.js'
import { type Orm, one, PREPARED, rows } from './client.js'
import { decodeCursor, pageOf } from './cursor.js'
import { apiTokens } from './schema.js'
import { iso, TOKENS_CHANNEL } from './sql.js'

export interface NewToken {
  label?: string | undefined
  expiresAt?: Date | undefined
}

const view = sql`id::float8 AS id, role, label, bootstrap,
  CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at <= now() THEN 'expired' ELSE 'active' END AS state,
  ${iso('created_at')} AS "createdAt", ${iso('last_used_at')} AS "lastUsedAt",
  ${iso('expires_at')} AS "expiresAt", ${iso('revoked_at')} AS "revokedAt"`

// Stores a new token's hash; answers the token as an admin sees it.
export async function insertToken(db: Orm, tokenHash: string, role: Role, opts: NewToken = {}) {
  const row = await one<TokenView>(
    db,
    sql`WITH t AS (
          INSERT INTO api_tokens (token_hash, role, label, expires_at)
          VALUES (${tokenHash}, ${role}, ${opts.label ?? null}, ${opts.expiresAt?.toISOString() ?? null}::timestamptz)
          RETURNING id, role, label, bootstrap, created_at, last_used_at, expires_at, revoked_at
        )
        SELECT ${view} FROM t`,
  )
  if (!row) throw new Error('the new token was not stored')
  return row
}

// Seeds one token of PREFLIGHT_BOOTSTRAP_TOKENS (its role follows the list); a revoked one stays revoked.
export async function upsertBootstrapToken(db: Orm, tokenHash: string, role: Role): Promise<void> {
  await db
    .insert(apiTokens)
    .values({ tokenHash, role, label: 'bootstrap', bootstrap: true })
    .onConflictDoUpdate({ target: apiTokens.tokenHash, set: { role, bootstrap: true } })
}

// Deletes the live bootstrap tokens whose hash is not given; answers how many went.
export async function deleteBootstrapTokensExcept(db: Orm, keep: string[], notify: boolean) {
  const kept =
    keep.length > 0
      ? sql`AND token_hash NOT IN (${sql.join(
          keep.map((hash) => sql`${hash}`),
          sql`, `,
        )})`
      : sql``
  const row = await one<{ n: number }>(
    db,
    sql`WITH gone AS (DELETE FROM api_tokens WHERE bootstrap AND revoked_at IS NULL ${kept} RETURNING 1)
        SELECT count(*)::int AS n${notifyIf(notify, sql`count(*) > 0`)} FROM gone`,
  )
  return row?.n ?? 0
}

// The role of a token that may be used now (not revoked, not expired), and until when; notes the use
// (to the minute, so a busy token writes its row once a minute at most).
export async function findActiveToken(db: Orm, tokenHash: string) {
  return one<{ id: number; role: Role; expires_ms: number | null }>(
    db,
    sql`WITH t AS (
          SELECT id, token_hash, role, expires_at FROM api_tokens
          WHERE token_hash = ${tokenHash} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
        ), used AS (
          UPDATE api_tokens a SET last_used_at = now() FROM t
          WHERE a.token_hash = t.token_hash AND (a.last_used_at IS NULL OR a.last_used_at < now() - interval '1 minute')
        )
        SELECT id::float8 AS id, role, (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms FROM t`,
    PREPARED,
  )
}

const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0

// Oldest first (by id), keyset-paginated.
export async function listTokens(
  db: Orm,
  query: { limit: number; cursor?: string | undefined },
): Promise<TokenPage> {
  const after = query.cursor === undefined ? 0 : decodeCursor(query.cursor, isId)
  const list = await rows<TokenView>(
    db,
    sql`SELECT ${view} FROM api_tokens WHERE id > ${after} ORDER BY id LIMIT ${query.limit + 1}`,
  )
  return pageOf(list, query.limit, (last) => last.id)
}

// Marks the token revoked (once: a second revoke keeps the first date); undefined when there is none.
export async function revokeToken(db: Orm, id: number, notify: boolean): Promise<TokenView | undefined> {
  const row = await one<TokenView>(
    db,
    sql`WITH r AS (
          UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id}
          RETURNING id, role, label, bootstrap, created_at, last_used_at, expires_at, revoked_at
        )
        SELECT ${view}${notifyIf(notify, sql`true`)} FROM r`,
  )
  if (!row) return undefined
  const { notified: _n, ...token } = row as TokenView & { notified?: unknown }
  return token
}

// Sent at commit: PostgreSQL only (one PGlite process has nobody to tell).
const notifyIf = (notify: boolean, when: SQL) =>
  notify ? sql`, CASE WHEN ${when} THEN pg_notify(${TOKENS_CHANNEL}, '') END AS notified` : sql``
