// An app on a fresh test database with one seeded token per role, and a JSON request helper.

import type { Role } from '../../src/contract/index.js'
import { createApp } from '../../src/coordinator/app.js'
import type { CoordinatorConfig } from '../../src/coordinator/config.js'
import { syncBootstrapTokens } from '../../src/coordinator/http/auth.js'
import { createPgliteDatabase, createTestDatabase, type TestDatabase } from './db.js'

export const tokens: Record<Role, string> = {
  orchestrator: 'test-orchestrator-token-0123456789',
  worker: 'test-worker-token-0123456789abcdef',
  operator: 'test-operator-token-0123456789abc',
  admin: 'test-admin-token-0123456789abcdefg',
}

export interface TestApp {
  app: ReturnType<typeof createApp>
  t: TestDatabase
  call(
    method: string,
    path: string,
    opts?: { role?: Role | null; body?: unknown; raw?: string },
  ): Promise<Reply>
  close(): Promise<void>
}

export interface Reply {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on the JSON shape they expect
  body: any
  headers: Headers
}

export async function createTestApp(
  config: Partial<CoordinatorConfig> = {},
  opts: { pglite?: boolean } = {},
): Promise<TestApp> {
  const t = opts.pglite ? await createPgliteDatabase() : await createTestDatabase()
  await syncBootstrapTokens(
    t.db.orm,
    Object.entries(tokens).map(([role, token]) => ({ role: role as Role, token })),
  )
  const app = createApp({ db: t.db, config })
  return {
    app,
    t,
    async call(method, path, { role = 'admin', body, raw } = {}) {
      const headers: Record<string, string> = {}
      if (role) headers.authorization = `Bearer ${tokens[role]}`
      if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json'
      const res = await app.request(path, {
        method,
        headers,
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      })
      const text = await res.text()
      return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers }
    },
    close: () => t.drop(),
  }
}
