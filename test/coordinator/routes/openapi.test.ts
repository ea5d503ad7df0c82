// The OpenAPI document's shape, held here so it cannot regress between runs of `npm run lint:openapi`:
// every operation named and summarised, public routes with `security: []`, the rest behind the bearer
// scheme, the contract's schemas as named components, and a server.
import { describe, expect, it } from 'vitest'
import { COMPONENTS } from '../../../src/coordinator/http/openapi.js'
import { useTestApp } from '../../support/app.js'

const PUBLIC = ['/healthz', '/readyz', '/openapi.json', '/docs']
const METHODS = ['get', 'put', 'post', 'delete', 'patch']

interface Operation {
  operationId?: string
  summary?: string
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> }
}

describe('the OpenAPI document', () => {
  const h = useTestApp()
  const doc = async () => (await h.call('GET', '/openapi.json', { role: null })).body
  const operations = async () =>
    Object.entries((await doc()).paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, path, op })),
    )

  it('describes every route the API answers', async () => {
    expect(Object.keys((await doc()).paths)).toEqual(
      expect.arrayContaining([
        ...PUBLIC,
        '/metrics',
        '/v1/subagents',
        '/v1/subagents/{name}',
        '/v1/dispatches',
        '/v1/dispatches/endings',
        '/v1/dispatches/{id}',
        '/v1/dispatches/{id}/cancel',
        '/v1/worker/claim',
        '/v1/dispatches/{id}/heartbeat',
        '/v1/dispatches/{id}/preflight',
        '/v1/dispatches/{id}/events',
        '/v1/dispatches/{id}/complete',
        '/v1/reports',
        '/v1/reports/summary',
        '/v1/tokens',
        '/v1/tokens/{id}',
        '/v1/webhooks',
        '/v1/webhooks/{id}',
        '/v1/webhooks/{id}/deliveries',
      ]),
    )
  })

  it('gives every operation a unique operationId and a summary', async () => {
    const ops = await operations()
    expect(ops.length).toBeGreaterThan(20)
    expect(
      ops.filter(({ op }) => !/^[a-z][A-Za-z]+$/.test(op.operationId ?? '')).map((o) => o.where),
    ).toEqual([])
    expect(ops.filter(({ op }) => !op.summary?.trim()).map((o) => o.where)).toEqual([])
    const ids = ops.map(({ op }) => op.operationId)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('says `security: []` on the public routes and the bearer scheme on every /v1 route', async () => {
    const ops = await operations()
    for (const path of PUBLIC) {
      const op = ops.find((o) => o.path === path)
      expect(op?.op.security, path).toEqual([])
    }
    const v1 = ops.filter((o) => o.path.startsWith('/v1/'))
    expect(v1.length).toBeGreaterThan(15)
    expect(
      v1.filter(({ op }) => JSON.stringify(op.security) !== '[{"bearer":[]}]').map((o) => o.where),
    ).toEqual([])
    // /metrics: without a token, or with the metrics token when one is set
    expect(ops.find((o) => o.path === '/metrics')?.op.security).toEqual([{}, { metrics: [] }])
    // and nothing without a word on security
    expect(ops.filter(({ op }) => op.security === undefined).map((o) => o.where)).toEqual([])
  })

  it('names the contract’s schemas as components, and refers to them', async () => {
    const d = await doc()
    expect(Object.keys(d.components.schemas)).toEqual(expect.arrayContaining(Object.keys(COMPONENTS)))
    expect(Object.keys(COMPONENTS).length).toBeGreaterThan(40)
    expect(d.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      metrics: { type: 'http', scheme: 'bearer' },
    })
    const body = (path: string, method: string) =>
      (d.paths[path][method] as Operation).requestBody?.content['application/json']?.schema.$ref
    expect(body('/v1/subagents', 'post')).toBe('#/components/schemas/SubagentDefinition')
    expect(body('/v1/dispatches', 'post')).toBe('#/components/schemas/CreateDispatchRequest')
    expect(body('/v1/dispatches/{id}/preflight', 'put')).toBe('#/components/schemas/PreflightRequest')
    expect(d.paths['/v1/dispatches/{id}'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/DispatchView',
    })
    // nested schemas are referred to as well, not copied in
    expect(d.components.schemas.PreflightRequest.properties.report).toEqual({
      $ref: '#/components/schemas/PreflightReport',
    })
  })

  it('names a server and the API', async () => {
    const d = await doc()
    expect(d.servers).toEqual([{ url: '/', description: 'this coordinator' }])
    expect(d.info).toMatchObject({ title: 'preflight coordinator', license: { identifier: 'MIT' } })
    expect(d.tags.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining([
        'subagents',
        'dispatches',
        'worker',
        'reports',
        'tokens',
        'webhooks',
        'health',
      ]),
    )
  })
})
