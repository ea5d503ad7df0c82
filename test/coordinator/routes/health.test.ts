import { describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'

describe('health and the app skeleton', () => {
  const h = useTestApp()

  it('answers healthz without a token', async () => {
    expect((await h.call('GET', '/healthz', { role: null })).body).toEqual({ status: 'ok' })
  })

  it('answers readyz with the database kind', async () => {
    expect((await h.call('GET', '/readyz', { role: null })).body).toEqual({
      status: 'ok',
      database: 'postgres',
    })
  })

  it('answers an unknown route with the 404 envelope', async () => {
    const r = await h.call('GET', '/nope', { role: null })
    expect(r.status).toBe(404)
    expect(r.body.error.code).toBe('not-found')
  })

  it('redirects / to the operator page, without a token', async () => {
    const r = await h.app.request('/')
    expect([302, 303]).toContain(r.status)
    expect(r.headers.get('location')).toBe('/ui')
  })

  it('refuses /v1 without a token with the 401 envelope', async () => {
    const r = await h.call('GET', '/v1/subagents/x', { role: null })
    expect(r.status).toBe(401)
    expect(r.body.error.code).toBe('unauthorized')
  })

  it('serves an OpenAPI 3.1 document', async () => {
    const r = await h.call('GET', '/openapi.json', { role: null })
    expect(r.body.openapi).toBe('3.1.0')
  })

  it('sends a request id and secure headers', async () => {
    const r = await h.call('GET', '/healthz', { role: null })
    expect(r.headers.get('x-request-id')).toBeTruthy()
    expect(r.headers.get('x-content-type-options')).toBe('nosniff')
  })
})
