// The edges of every request: the access log (one record per request with its id, route pattern,
// status and duration; never a secret), and the headers every answer carries, on the server and in
// app.request() alike.
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { edges, SECURE_HEADERS } from '../../../src/coordinator/http/edges.js'
import { createRouter, renderError } from '../../../src/coordinator/http/http.js'
import { createLog } from '../../../src/log/log.js'
import { tokens, useTestApp } from '../../support/app.js'
import { type Served, serveCoordinator } from '../../support/served.js'

function capture(level: 'info' | 'debug' = 'info') {
  const lines: string[] = []
  const log = createLog({ name: 'coordinator', level, stream: { write: (l) => lines.push(l) } })
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('the access log of the app', () => {
  const logged = capture()
  const t = useTestApp({}, { log: logged.log })
  const get = (path: string, headers: Record<string, string> = {}) =>
    t.app.request(path, { headers: { authorization: `Bearer ${tokens.operator}`, ...headers } })

  it('records the route pattern, never the path with its ids, with status, method and duration', async () => {
    logged.lines.length = 0
    const id = '00000000-0000-4000-8000-000000000001'
    const res = await get(`/v1/dispatches/${id}`, { 'x-request-id': 'from-the-caller-42' })
    expect(res.status).toBe(404)
    expect(res.headers.get('x-request-id')).toBe('from-the-caller-42')
    const [record] = logged.records()
    expect(record).toMatchObject({
      level: 'info',
      msg: 'request',
      reqId: 'from-the-caller-42',
      method: 'GET',
      route: '/v1/dispatches/:id',
      status: 404,
      durationMs: expect.any(Number),
    })
    expect(logged.lines.join('')).not.toContain(id)
    expect(logged.lines.join('')).not.toContain(tokens.operator)
  })

  it('replaces a request id that is not sane by a random one, and answers it', async () => {
    for (const bad of ['has space', 'a"quote', 'x'.repeat(256), 'line\tbreak']) {
      logged.lines.length = 0
      const res = await get('/v1/reports', { 'x-request-id': bad })
      const answered = res.headers.get('x-request-id') ?? ''
      expect(answered).toMatch(UUID)
      expect(logged.records()[0]?.reqId).toBe(answered)
    }
  })

  it('gives a request without an id a random one, in the answer and the record', async () => {
    logged.lines.length = 0
    const res = await get('/v1/reports')
    expect(res.headers.get('x-request-id')).toMatch(UUID)
    expect(logged.records()[0]).toMatchObject({
      reqId: res.headers.get('x-request-id'),
      route: '/v1/reports',
      status: 200,
    })
  })

  it('keeps probes to debug', async () => {
    logged.lines.length = 0
    await t.app.request('/healthz')
    expect(logged.lines).toEqual([])
  })
})

describe('the access log middleware', () => {
  it("records a 500 as error with the error's stack, its secrets redacted, and answers no stack", async () => {
    const { log, lines, records } = capture()
    const app = createRouter()
    app.use('*', edges({ log }))
    app.get('/boom/:id', () => {
      throw new Error('connect postgres://preflight:db-password-1@db:5432/x failed')
    })
    app.onError(renderError)
    const res = await app.request('/boom/7')
    expect(res.status).toBe(500)
    expect(await res.text()).not.toContain('postgres://')
    expect(records()[0]).toMatchObject({
      level: 'error',
      route: '/boom/:id',
      status: 500,
      err: { message: expect.stringContaining('connect postgres://') },
    })
    expect(lines.join('')).not.toContain('db-password-1')
  })

  it('records the unmatched as such, never their path', async () => {
    const { log, records } = capture()
    const app = createRouter()
    app.use('*', edges({ log }))
    await app.request('/no/such/thing-with-an-id-123')
    expect(records()[0]).toMatchObject({ route: 'unmatched', status: 404 })
  })

  it('records probes at debug', async () => {
    const { log, records } = capture('debug')
    const app = createRouter()
    app.use('*', edges({ log }))
    app.get('/healthz', (c) => c.json({ status: 'ok' }))
    await app.request('/healthz')
    expect(records()[0]).toMatchObject({ level: 'debug', route: '/healthz', status: 200 })
  })
})

// Each of hono's secureHeaders() defaults, and the request id.
function expectEdgeHeaders(headers: Headers, reqId: string | RegExp = UUID) {
  for (const [name, value] of SECURE_HEADERS) expect(headers.get(name), name).toBe(value)
  expect(headers.get('x-request-id')).toMatch(reqId)
}

describe('the headers of every answer', () => {
  describe('served over HTTP', () => {
    let served: Served
    beforeAll(async () => {
      served = await serveCoordinator()
    })
    afterAll(() => served.stop())
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${served.server.url}${path}`, { headers })

    it('are on a probe, a JSON answer and an error', async () => {
      expectEdgeHeaders((await get('/healthz')).headers)
      const listed = await get('/v1/reports', { authorization: `Bearer ${tokens.operator}` })
      expect(listed.status).toBe(200)
      expect(listed.headers.get('content-type')).toContain('application/json')
      expectEdgeHeaders(listed.headers)
      const refused = await get('/v1/reports')
      expect(refused.status).toBe(401)
      expectEdgeHeaders(refused.headers)
      expectEdgeHeaders((await get('/no/such/route')).headers)
    })

    it("keep the caller's sane request id, and a page's own headers", async () => {
      expectEdgeHeaders((await get('/healthz', { 'x-request-id': 'caller-7' })).headers, /^caller-7$/)
      const page = await get('/ui/sign-in')
      expect(page.headers.get('content-security-policy')).toBeTruthy()
      expectEdgeHeaders(page.headers)
    })
  })

  describe("a handler's own", () => {
    const app = createRouter()
    app.use('*', edges({}))
    app.get('/framed', (c) => {
      c.header('X-Frame-Options', 'DENY')
      return c.json({ framed: false })
    })
    let server: ReturnType<typeof serve> | undefined
    afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())))

    it('is kept, on the server and in app.request() alike', async () => {
      const url = await new Promise<string>((resolve) => {
        server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
          resolve(`http://127.0.0.1:${info.port}`),
        )
      })
      for (const res of [await fetch(`${url}/framed`), await app.request('/framed')]) {
        expect(res.headers.get('x-frame-options')).toBe('DENY')
        expect(res.headers.get('x-content-type-options')).toBe('nosniff')
        expect(res.headers.get('x-request-id')).toMatch(UUID)
      }
    })
  })

  describe('in app.request()', () => {
    const t = useTestApp()
    it('are on a JSON answer and an error', async () => {
      expectEdgeHeaders((await t.app.request('/healthz')).headers)
      expectEdgeHeaders((await t.app.request('/v1/reports')).headers)
      const kept = await t.app.request('/healthz', { headers: { 'x-request-id': 'caller-8' } })
      expectEdgeHeaders(kept.headers, /^caller-8$/)
    })
  })
})
