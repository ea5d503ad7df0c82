// An app on a fresh test database with one seeded token per role, and a JSON request helper.
// `useTestApp()` gives a suite one such app, made before its tests and dropped after them.

import { afterAll, beforeAll } from 'vitest'
import type { Role } from '../../src/contract/index.js'
import { createApp } from '../../src/coordinator/app.js'
import type { CoordinatorConfig } from '../../src/coordinator/config.js'
import { lastEventIds } from '../../src/coordinator/db/events.js'
import { Waker } from '../../src/coordinator/dispatch/waker.js'
import { DispatchWatch } from '../../src/coordinator/dispatch/watch.js'
import { syncBootstrapTokens } from '../../src/coordinator/http/auth.js'
import type { Log } from '../../src/log/log.js'
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
  // the app's waker: `waker.waiting` tells when a long-polling claim is parked
  waker: Waker
  // the same for long-polls of GET /v1/dispatches/endings
  endings: Waker
  // what waits on one dispatch: long-polls of GET /v1/dispatches/{id}, event streams
  watch: DispatchWatch
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
  opts: { pglite?: boolean; log?: Log } = {},
): Promise<TestApp> {
  const t = opts.pglite ? await createPgliteDatabase() : await createTestDatabase()
  await syncBootstrapTokens(
    t.db.orm,
    Object.entries(tokens).map(([role, token]) => ({ role: role as Role, token })),
  )
  const waker = new Waker()
  const endings = new Waker()
  const watch = new DispatchWatch((ids) => lastEventIds(t.db.orm, ids), config.watchPollMs ?? 1_000)
  const app = createApp({ db: t.db, config, waker, endings, watch, ...(opts.log ? { log: opts.log } : {}) })
  return {
    app,
    t,
    waker,
    endings,
    watch,
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

// The suite's app: made in a beforeAll, dropped in an afterAll, both registered here (in the describe
// it is called in). The returned object reads the app of the moment, so tests and helpers use it as a TestApp.
export function useTestApp(
  config: Partial<CoordinatorConfig> = {},
  opts: { pglite?: boolean; log?: Log } = {},
): TestApp {
  let current: TestApp | undefined
  beforeAll(async () => {
    current = await createTestApp(config, opts)
  })
  afterAll(async () => {
    await current?.close()
    current = undefined
  })
  const get = (): TestApp => {
    if (!current) throw new Error('useTestApp: the app exists from beforeAll to afterAll only')
    return current
  }
  return {
    get app() {
      return get().app
    },
    get t() {
      return get().t
    },
    get waker() {
      return get().waker
    },
    get endings() {
      return get().endings
    },
    get watch() {
      return get().watch
    },
    call: (method, path, opts) => get().call(method, path, opts),
    close: () => get().close(),
  }
}
