// Who may read reports: operator and admin; other roles 403, no or unknown token 401. Both in OpenAPI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ReportsHarness, startReportsHarness } from '../../support/reports-app.js'

let h: ReportsHarness

beforeAll(async () => {
  h = await startReportsHarness()
}, 60_000)

afterAll(async () => {
  await h?.close()
})

const matrix = [
  ['operator', 200],
  ['admin', 200],
  ['orchestrator', 403],
  ['worker', 403],
  [null, 401],
] as const

describe.each(['/v1/reports', '/v1/reports/summary'])('GET %s', (path) => {
  for (const [role, status] of matrix) {
    it(`answers ${status} to ${role ?? 'no token'}`, async () => {
      const res = await h.get(path, role)
      expect(res.status).toBe(status)
      if (status !== 200) expect(res.body.error.code).toBe(status === 401 ? 'unauthorized' : 'forbidden')
    })
  }

  it('answers 401 to an unknown token', async () => {
    const res = await h.app.request(path, { headers: { authorization: 'Bearer not-a-real-token-at-all' } })
    expect(res.status).toBe(401)
  })

  it('is described in /openapi.json with its query parameters', async () => {
    const doc = (await (await h.app.request('/openapi.json')).json()) as {
      paths: Record<string, { get: { parameters: { name: string }[] } }>
    }
    const params = doc.paths[path]?.get.parameters.map((p) => p.name)
    expect(params).toEqual(expect.arrayContaining(['subagent', 'since', 'until', 'limit', 'cursor']))
  })
})
