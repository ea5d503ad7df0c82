import { randomUUID } from 'node:crypto'
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { syncBootstrapTokens } from '../../../src/coordinator/http/auth.js'
import { type RunningServer, startServer } from '../../../src/coordinator/server.js'
import { tokens } from '../../support/app.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'

// Over real HTTP (node:http, not app.request): the limit reads Content-Length there, and counts
// the bytes of a chunked body.
const LIMIT = 1000

function post(url: string, chunks: string[], headers: Record<string, string | number>, method = 'POST') {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${url}/v1/dispatches${method === 'GET' ? `/${randomUUID()}` : ''}`, {
      method,
      headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': 'application/json', ...headers },
    })
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    // The server may answer and close before the whole body is sent.
    req.on('error', reject)
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

const oversized = JSON.stringify({ subagent: 'x', workspace: { repo: 'r' }, pad: 'x'.repeat(LIMIT) })

describe('the body limit over HTTP', () => {
  let t: TestDatabase
  let server: RunningServer
  beforeAll(async () => {
    t = await createTestDatabase()
    await syncBootstrapTokens(t.db.orm, [{ role: 'admin', token: tokens.admin }])
    server = await startServer({
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      config: { bodyLimitBytes: LIMIT },
    })
  })
  afterAll(async () => {
    await server.stop()
    await t.drop()
  })

  it('refuses a body whose Content-Length is over the limit with 413', async () => {
    const res = await post(server.url, [oversized], { 'content-length': Buffer.byteLength(oversized) })
    expect(res.status).toBe(413)
    expect(JSON.parse(res.body).error.code).toBe('payload-too-large')
  })

  it('refuses a chunked body that grows over the limit with 413', async () => {
    const res = await post(server.url, [oversized.slice(0, 600), oversized.slice(600)], {})
    expect(res.status).toBe(413)
    expect(JSON.parse(res.body).error.code).toBe('payload-too-large')
  })

  it('reads a body under the limit', async () => {
    const body = JSON.stringify({ subagent: 'nobody', workspace: { repo: 'r' } })
    const res = await post(server.url, [body], { 'content-length': Buffer.byteLength(body) })
    expect(JSON.parse(res.body).error.code).toBe('unknown-subagent')
  })

  it('answers a request without a body (a GET) past the limit', async () => {
    const res = await post(server.url, [], {}, 'GET')
    expect(JSON.parse(res.body).error.code).toBe('not-found')
  })
})
