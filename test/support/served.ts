// A real coordinator served on an ephemeral port over a test database of its own, with the bootstrap
// tokens of test/support/app.ts, and its requests as a client sends them over HTTP: for the suites
// that run the CLI or the docs' commands against it.
import type { Role } from '../../src/contract/index.js'
import { syncBootstrapTokens } from '../../src/coordinator/http/auth.js'
import { type RunningServer, type ServerOptions, startServer } from '../../src/coordinator/server.js'
import { type Reply, tokens } from './app.js'
import { createTestDatabase, type TestDatabase } from './db.js'

export interface Served {
  t: TestDatabase
  server: RunningServer
  // as `role` (`admin` unless said; null: no token), a JSON body when given
  request(method: string, path: string, opts?: { role?: Role | null; body?: unknown }): Promise<Reply>
  stop(): Promise<void>
}

export async function serveCoordinator(
  options: (t: TestDatabase) => Partial<Omit<ServerOptions, 'db'>> = () => ({}),
): Promise<Served> {
  const t = await createTestDatabase({ poolSize: 4 })
  await syncBootstrapTokens(
    t.db.orm,
    Object.entries(tokens).map(([role, token]) => ({ role: role as Role, token })),
  )
  const server = await startServer({ db: t.db, port: 0, host: '127.0.0.1', ...options(t) })
  const request: Served['request'] = async (method, path, { role = 'admin', body } = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        ...(role ? { authorization: `Bearer ${tokens[role]}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers }
  }
  return {
    t,
    server,
    request,
    async stop() {
      await server.stop()
      await t.drop()
    },
  }
}
