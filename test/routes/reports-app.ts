// The coordinator app on a fresh PostgreSQL database, with one token per role, for the reports tests.
import postgres, { type Sql } from 'postgres'
import { createApp } from '../../src/app.js'
import { hashToken } from '../../src/auth.js'
import type { Role } from '../../src/contract/api.js'
import { insertToken } from '../../src/db/tokens.js'
import { createTestDatabase, type TestDatabase } from '../support/db.js'

export const tokens: Record<Role, string> = {
  orchestrator: 'orchestrator-token-0123456789',
  worker: 'worker-token-0123456789',
  operator: 'operator-token-0123456789',
  admin: 'admin-token-0123456789',
}

export interface ReportsHarness {
  // a plain postgres.js client for seeding (drizzle rewires the parsers of its own client)
  sql: Sql
  app: ReturnType<typeof createApp>
  get(path: string, role?: Role | null): Promise<{ status: number; body: any }>
  close(): Promise<void>
}

export async function startReportsHarness(): Promise<ReportsHarness> {
  const database: TestDatabase = await createTestDatabase({ poolSize: 4 })
  const sql = postgres(database.url ?? '', { max: 2, onnotice: () => {} })
  for (const [role, token] of Object.entries(tokens)) {
    await insertToken(database.db.orm, hashToken(token), role as Role)
  }
  const app = createApp({ db: database.db })
  return {
    sql,
    app,
    async get(path, role = 'operator') {
      const headers: Record<string, string> = role ? { authorization: `Bearer ${tokens[role]}` } : {}
      const res = await app.request(path, { headers })
      return { status: res.status, body: await res.json() }
    },
    async close() {
      await sql.end()
      await database.drop()
    },
  }
}
