// Subagent definitions: every version kept; a new version only when the hash changes.
import { and, desc, eq, sql } from 'drizzle-orm'
import {
  hashDefinition,
  normaliseDefinition,
  type SubagentDefinition,
  type SubagentRegistered,
  type SubagentVersionView,
} from '../../contract/index.js'
import type { Orm } from './client.js'
import { subagentVersions } from './schema.js'

export interface Registration extends SubagentRegistered {
  created: boolean
}

export async function registerSubagent(db: Orm, def: SubagentDefinition): Promise<Registration> {
  const definition = normaliseDefinition(def)
  const hash = hashDefinition(definition)
  return db.transaction(async (tx) => {
    // Serialises registrations of one name, so concurrent identical ones store one version.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`subagent:${def.name}`}))`)
    const latest = await latestVersion(tx, def.name)
    if (latest?.hash === hash) return { name: def.name, version: latest.version, hash, created: false }
    const version = (latest?.version ?? 0) + 1
    await tx.insert(subagentVersions).values({ name: def.name, version, hash, definition })
    return { name: def.name, version, hash, created: true }
  })
}

async function latestVersion(db: Orm, name: string) {
  const [row] = await db
    .select({ version: subagentVersions.version, hash: subagentVersions.hash })
    .from(subagentVersions)
    .where(eq(subagentVersions.name, name))
    .orderBy(desc(subagentVersions.version))
    .limit(1)
  return row
}

// One version, or the latest when `version` is absent.
export async function findSubagent(
  db: Orm,
  name: string,
  version?: number,
): Promise<SubagentVersionView | undefined> {
  const where =
    version === undefined
      ? eq(subagentVersions.name, name)
      : and(eq(subagentVersions.name, name), eq(subagentVersions.version, version))
  const [row] = await db
    .select()
    .from(subagentVersions)
    .where(where)
    .orderBy(desc(subagentVersions.version))
    .limit(1)
  if (!row) return undefined
  return {
    name: row.name,
    version: row.version,
    hash: row.hash,
    definition: row.definition,
    createdAt: row.createdAt.toISOString(),
  }
}
