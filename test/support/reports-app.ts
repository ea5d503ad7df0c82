// The coordinator app for the reports tests: the shared test app, a GET helper with a role, a seeder.
import type { Role } from '../../src/contract/index.js'
import type { Orm } from '../../src/coordinator/db/client.js'
import { createTestApp, type Reply, type TestApp } from './app.js'
import { type SeedReport, seedReport } from './reports-fixtures.js'

export interface ReportsHarness {
  app: TestApp['app']
  db: Orm
  get(path: string, role?: Role | null): Promise<Reply>
  seed(report: SeedReport): Promise<{ dispatchId: string }>
  close(): Promise<void>
}

// PostgreSQL by default; `pglite` runs the same app on the embedded database.
export async function startReportsHarness(opts: { pglite?: boolean } = {}): Promise<ReportsHarness> {
  const t = await createTestApp({}, opts)
  return {
    app: t.app,
    db: t.t.db.orm,
    get: (path, role = 'operator') => t.call('GET', path, { role }),
    seed: (report) => seedReport(t.t.db.orm, report),
    close: () => t.close(),
  }
}
