// Sign-in sessions of the operator page: stored by the sha256 of their id, tied to the token that
// opened them (a revoked, expired or deleted token ends its sessions).
import { sql } from 'drizzle-orm'
import type { Role } from '../../contract/index.js'
import { type Orm, one } from './client.js'

// Opens a session for a usable token of one of `roles`; answers its role, or nothing when there is no
// such token. Sessions past their expiry are deleted on the way.
export async function insertSession(
  db: Orm,
  sessionHash: string,
  tokenHash: string,
  roles: readonly Role[],
  ttlMs: number,
) {
  return one<{ role: Role }>(
    db,
    sql`WITH t AS (
          SELECT token_hash, role FROM api_tokens
          WHERE token_hash = ${tokenHash} AND role IN (${anyOf(roles)}) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
        ), gone AS (
          DELETE FROM ui_sessions WHERE expires_at < now()
        ), made AS (
          INSERT INTO ui_sessions (session_hash, token_hash, expires_at)
          SELECT ${sessionHash}, token_hash, now() + ${ttlMs} * interval '1 millisecond' FROM t
        )
        SELECT role FROM t`,
  )
}

// The role and token id of a live session: not expired, and its token neither revoked nor expired nor
// moved to a role outside `roles` (a restart may give a bootstrap token another role).
export async function findSession(db: Orm, sessionHash: string, roles: readonly Role[]) {
  return one<{ role: Role; token_id: number }>(
    db,
    sql`SELECT t.role, t.id::float8 AS token_id FROM ui_sessions s JOIN api_tokens t ON t.token_hash = s.token_hash
        WHERE s.session_hash = ${sessionHash} AND s.expires_at > now() AND t.role IN (${anyOf(roles)})
          AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
  )
}

const anyOf = (roles: readonly Role[]) =>
  sql.join(
    roles.map((r) => sql`${r}`),
    sql`, `,
  )

export async function deleteSession(db: Orm, sessionHash: string): Promise<void> {
  await db.execute(sql`DELETE FROM ui_sessions WHERE session_hash = ${sessionHash}`)
}
