// API tokens: stored only as sha256 hashes, one role each.
import { eq } from 'drizzle-orm'
import type { Role } from '../contract/api.js'
import type { Orm } from './client.js'
import { apiTokens } from './schema.js'

export async function insertToken(db: Orm, tokenHash: string, role: Role, label?: string): Promise<void> {
  await db
    .insert(apiTokens)
    .values({ tokenHash, role, label: label ?? null })
    .onConflictDoUpdate({ target: apiTokens.tokenHash, set: { role } })
}

export async function findTokenRole(db: Orm, tokenHash: string): Promise<Role | undefined> {
  const [row] = await db
    .select({ role: apiTokens.role })
    .from(apiTokens)
    .where(eq(apiTokens.tokenHash, tokenHash))
  return row?.role
}
