import { hc } from 'hono/client'
import { describe, expect, it } from 'vitest'
import type { AppType } from '../../../src/coordinator/app.js'
import { tokens, useTestApp } from '../../support/app.js'
import { definition } from '../../support/fixtures.js'

describe('typed client and OpenAPI document', () => {
  const h = useTestApp()

  it('lets an orchestrator call the API through hono/client with the exported AppType', async () => {
    const client = hc<AppType>('http://coordinator', {
      fetch: (input: string | URL | Request, init?: RequestInit) => h.app.request(input, init),
      headers: { authorization: `Bearer ${tokens.orchestrator}` },
    })
    const res = await client.v1.subagents.$post({ json: definition('typed') })
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(body.version).toBe(1)
  })

  it('describes every route of the HTTP API with bearer auth', async () => {
    const doc = (await h.call('GET', '/openapi.json', { role: null })).body
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/healthz',
        '/readyz',
        '/v1/subagents',
        '/v1/subagents/{name}',
        '/v1/dispatches',
        '/v1/dispatches/{id}',
        '/v1/dispatches/{id}/cancel',
        '/v1/worker/claim',
        '/v1/dispatches/{id}/heartbeat',
        '/v1/dispatches/{id}/preflight',
        '/v1/dispatches/{id}/events',
        '/v1/dispatches/{id}/complete',
        '/v1/tokens',
        '/v1/tokens/{id}',
      ]),
    )
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' })
    expect(doc.paths['/v1/worker/claim'].post.security).toEqual([{ bearer: [] }])
  })
})
