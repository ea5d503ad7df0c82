import { hc } from 'hono/client'
import { describe, expect, it } from 'vitest'
import type { AppType } from '../../../src/coordinator/app.js'
import { tokens, useTestApp } from '../../support/app.js'
import { definition } from '../../support/fixtures.js'

describe('typed client', () => {
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
})
