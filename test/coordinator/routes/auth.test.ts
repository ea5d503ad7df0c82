import { describe, expect, it } from 'vitest'
import type { Role } from '../../../src/contract/index.js'
import { useTestApp } from '../../support/app.js'
import { routes } from '../../support/routes.js'

const roles: Role[] = ['orchestrator', 'worker', 'operator', 'admin']

describe('the auth matrix', () => {
  const h = useTestApp()

  const cases = routes.flatMap((r) =>
    roles.map((role) => [`${r.method} ${r.path.replace(/[0-9a-f-]{36}/, '{id}')}`, role, r] as const),
  )

  it.each(cases)('%s as %s: allowed only for its roles and admin', async (_l, role, r) => {
    const reply = await h.call(r.method, r.path, { role, body: r.body })
    const allowed = role === 'admin' || r.roles.includes(role)
    if (allowed) expect([401, 403]).not.toContain(reply.status)
    else {
      expect(reply.status).toBe(403)
      expect(reply.body.error.code).toBe('forbidden')
    }
  })

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s without a token is 401',
    async (_l, r) => {
      const reply = await h.call(r.method, r.path, { role: null, body: r.body })
      expect(reply.status).toBe(401)
      expect(reply.body.error.code).toBe('unauthorized')
    },
  )

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s with an unknown token is 401',
    async (_l, r) => {
      const res = await h.app.request(r.path, {
        method: r.method,
        headers: { authorization: 'Bearer not-a-real-token-at-all', 'content-type': 'application/json' },
        body: r.body ? JSON.stringify(r.body) : undefined,
      })
      expect(res.status).toBe(401)
    },
  )

  it('needs no token for health, readiness and the OpenAPI document', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      expect((await h.call('GET', path, { role: null })).status).toBe(200)
    }
  })
})
