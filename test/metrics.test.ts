// createMetrics: the Prometheus text at GET /metrics, from the database and from in-process counters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter } from '../src/http.js'
import { createMetrics, type Metrics } from '../src/metrics.js'
import { met, seedReport, unmet } from './routes/reports-fixtures.js'
import { createTestApp, type TestApp } from './support/app.js'
import { createTestDatabase, type TestDatabase } from './support/db.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from './support/fixtures.js'

let t: TestDatabase
let metrics: Metrics
let app: ReturnType<typeof createRouter>

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 2 })
  for (let i = 0; i < 3; i++) await seedReport(t.db.orm, { at: '2026-05-01T00:00:00Z', results: [met()] })
  metrics = createMetrics(t.db.orm, { processMetrics: false })
  app = createRouter()
  app.use('*', metrics.middleware)
  app.get('/v1/things/:id', (c) => c.json({ id: c.req.param('id') }))
  app.route('/', metrics.routes)
}, 60_000)

afterAll(async () => {
  await t?.drop()
})

const scrape = async () => (await app.request('/metrics')).text()

describe('GET /metrics', () => {
  it('answers Prometheus text without a token', async () => {
    const res = await app.request('/metrics')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
  })

  it('counts dispatches by status in the database, zero for the empty ones', async () => {
    const text = await scrape()
    expect(text).toContain('preflight_dispatches{status="running"} 3')
    expect(text).toContain('preflight_dispatches{status="queued"} 0')
  })

  it('labels HTTP latency by route pattern, not by the raw path', async () => {
    await app.request('/v1/things/abc')
    await app.request('/v1/things/def')
    const text = await scrape()
    expect(text).toContain(
      'preflight_http_request_duration_seconds_count{method="GET",route="/v1/things/:id",status="200"} 2',
    )
    expect(text).not.toContain('abc')
  })

  it('gives every unmatched path one label', async () => {
    await app.request('/nothing/here/1')
    await app.request('/nothing/here/2')
    expect(await scrape()).toContain('route="unmatched",status="404"} 2')
  })

  it('counts reports by outcome and results by kind, status and reason', async () => {
    metrics.recordReport('web', { outcome: 'unmet', results: [met('node'), unmet('pnpm')] as never })
    const text = await scrape()
    expect(text).toContain('preflight_reports_total{subagent="web",outcome="unmet"} 1')
    expect(text).toContain(
      'preflight_results_total{subagent="web",kind="exec",status="unmet",reason="not-found"} 1',
    )
    expect(text).toContain('preflight_results_total{subagent="web",kind="exec",status="met",reason=""} 1')
  })

  it('labels a reason no release knows as "other", so workers cannot grow the series', async () => {
    const odd = { ...unmet('make'), reason: `made-up-${Math.random()}` }
    metrics.recordReport('odd', { outcome: 'unmet', results: [odd] as never })
    expect(await scrape()).toContain(
      'preflight_results_total{subagent="odd",kind="exec",status="unmet",reason="other"} 1',
    )
  })

  it('observes claim waits in seconds', async () => {
    metrics.observeClaimWait(250)
    expect(await scrape()).toMatch(/preflight_claim_wait_seconds_sum 0\.25\b/)
  })
})

describe('GET /metrics without a database', () => {
  it('still answers, leaving the dispatch gauge empty', async () => {
    const gone = await createTestDatabase({ poolSize: 1 })
    const lonely = createMetrics(gone.db.orm, { processMetrics: false })
    await gone.drop()
    const text = await lonely.registry.metrics()
    expect(text).toContain('# TYPE preflight_dispatches gauge')
    expect(text).not.toContain('preflight_dispatches{')
  })
})

describe('GET /metrics on the coordinator', () => {
  let h: TestApp
  beforeAll(async () => {
    h = await createTestApp()
  }, 60_000)
  afterAll(async () => {
    await h?.close()
  })

  it('counts a stored report once, also when the worker retries it', async () => {
    const id = await queueDispatch(h)
    const claimed = await claim(h)
    const body = { ...fenceOf(claimed), report: reportFor(definition(), 'unmet') }
    for (let i = 0; i < 2; i++) {
      const put = await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body })
      expect(put.status).toBe(200)
    }
    const text = await (await h.app.request('/metrics')).text()
    expect(text).toContain('preflight_reports_total{subagent="frontend-fixer",outcome="unmet"} 1')
    expect(text).toContain(
      'preflight_results_total{subagent="frontend-fixer",kind="exec",status="unmet",reason="not-found"} 2',
    )
    expect(text).toContain('preflight_claim_wait_seconds_count 1')
    expect(text).toContain('preflight_dispatches{status="preflight_failed"} 1')
  })
})
