// The access log: one record per request with its id, route pattern, status and duration; never a secret.
import { describe, expect, it } from 'vitest'
import { accessLog } from '../../../src/coordinator/http/access-log.js'
import { createRouter, renderError } from '../../../src/coordinator/http/http.js'
import { createLog } from '../../../src/log/log.js'
import { tokens, useTestApp } from '../../support/app.js'

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
    app.use('*', accessLog(log))
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
    app.use('*', accessLog(log))
    await app.request('/no/such/thing-with-an-id-123')
    expect(records()[0]).toMatchObject({ route: 'unmatched', status: 404 })
  })

  it('records probes at debug', async () => {
    const { log, records } = capture('debug')
    const app = createRouter()
    app.use('*', accessLog(log))
    app.get('/healthz', (c) => c.json({ status: 'ok' }))
    await app.request('/healthz')
    expect(records()[0]).toMatchObject({ level: 'debug', route: '/healthz', status: 200 })
  })
})
