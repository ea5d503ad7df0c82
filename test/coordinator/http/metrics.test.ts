// createMetrics: the Prometheus text at GET /metrics, from the database and from in-process counters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Orm } from '../../../src/coordinator/db/client.js'
import { edges } from '../../../src/coordinator/http/edges.js'
import { createRouter, renderError } from '../../../src/coordinator/http/http.js'
import { createMetrics, type Metrics } from '../../../src/coordinator/http/metrics.js'
import { metricsRoutes } from '../../../src/coordinator/routes/metrics.js'
import { tokens, useTestApp } from '../../support/app.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'
import { met, seedReport, unmet } from '../../support/reports-fixtures.js'

let t: TestDatabase
let metrics: Metrics
let app: ReturnType<typeof createRouter>

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 2 })
  for (let i = 0; i < 3; i++) await seedReport(t.db.orm, { at: '2026-05-01T00:00:00Z', results: [met()] })
  metrics = createMetrics(t.db.orm, { processMetrics: false, cacheMs: 0 })
  app = createRouter()
  app.use('*', edges({ metrics }))
  app.get('/v1/things/:id', (c) => c.json({ id: c.req.param('id') }))
  app.route('/', metricsRoutes(metrics))
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

  it('says which version runs on which Node.js', async () => {
    expect(await scrape()).toMatch(
      new RegExp(`preflight_build_info\\{version="\\d+\\.\\d+\\.\\d+",node="${process.version}"\\} 1`),
    )
  })

  it('gives the age of the oldest queued dispatch, 0 when none is queued', async () => {
    expect(await scrape()).toContain('preflight_oldest_queued_seconds 0')
    const h = await seedQueued(t.db.orm, 90)
    const age = Number(/^preflight_oldest_queued_seconds (\S+)$/m.exec(await scrape())?.[1])
    expect(age).toBeGreaterThanOrEqual(90)
    expect(age).toBeLessThan(120)
    await h.cancel()
  })

  it('counts ended dispatches by status and reason, and lease expiries by outcome', async () => {
    metrics.recordEnded('setup_failed', 'clone-failed')
    metrics.recordEnded('setup_failed', `made-up-${Math.random()}`)
    metrics.recordEnded('succeeded', undefined)
    metrics.recordLapsed(2, 1)
    metrics.recordLapsed(0, 0)
    const text = await scrape()
    expect(text).toContain('preflight_dispatches_ended_total{status="setup_failed",reason="clone-failed"} 1')
    expect(text).toContain('preflight_dispatches_ended_total{status="setup_failed",reason="other"} 1')
    expect(text).toContain('preflight_dispatches_ended_total{status="succeeded",reason=""} 1')
    expect(text).toContain('preflight_lease_expiries_total{outcome="requeued"} 2')
    expect(text).toContain('preflight_lease_expiries_total{outcome="expired"} 1')
  })

  it('observes claim waits in seconds', async () => {
    metrics.observeClaimWait(250)
    expect(await scrape()).toMatch(/preflight_claim_wait_seconds_sum 0\.25\b/)
  })
})

// A queued dispatch created `ageSeconds` ago; cancel() takes it out of the queue.
async function seedQueued(orm: Orm, ageSeconds: number) {
  const { sql } = await import('drizzle-orm')
  const [row] = (await orm.execute(sql`SELECT name, version FROM subagent_versions LIMIT 1`)) as unknown as {
    name: string
    version: number
  }[]
  const id = crypto.randomUUID()
  await orm.execute(
    sql`INSERT INTO dispatches (id, subagent_name, subagent_version, workspace, created_at)
        VALUES (${id}, ${row?.name}, ${row?.version}, '{}'::jsonb, now() - ${ageSeconds} * interval '1 second')`,
  )
  return { cancel: () => orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE id = ${id}`) }
}

describe('GET /metrics under many scrapers', () => {
  // The database as the metrics see it, counting the statements they send.
  const counted = () => {
    const seen = { statements: 0 }
    const orm = new Proxy(t.db.orm, {
      get(target, key, receiver) {
        if (key !== 'execute') return Reflect.get(target, key, receiver)
        return (query: Parameters<Orm['execute']>[0]) => {
          seen.statements++
          return target.execute(query)
        }
      },
    })
    return { orm, seen }
  }
  const scrapeOf = (m: Metrics) => async () => {
    const router = createRouter().route('/', metricsRoutes(m))
    return (await router.request('/metrics')).text()
  }

  it('counts dispatches once for 40 concurrent scrapes, and not again within cacheMs', async () => {
    const { orm, seen } = counted()
    const scrape = scrapeOf(createMetrics(orm, { processMetrics: false, cacheMs: 60_000 }))
    const texts = await Promise.all(Array.from({ length: 40 }, scrape))
    expect(new Set(texts).size).toBe(1)
    expect(texts[0]).toContain('preflight_dispatches{status="running"} 3')
    for (let i = 0; i < 10; i++) await scrape()
    expect(seen.statements).toBe(1)
  })

  it('counts again once cacheMs has passed, answering the last figures meanwhile', async () => {
    const { orm, seen } = counted()
    const scrape = scrapeOf(createMetrics(orm, { processMetrics: false, cacheMs: 50 }))
    expect(await scrape()).toContain('preflight_dispatches{status="running"} 3')
    await seedReport(t.db.orm, { at: '2026-05-02T00:00:00Z', results: [met()] })
    let text = await scrape()
    while (!text.includes('preflight_dispatches{status="running"} 4')) {
      expect(text).toContain('preflight_dispatches{status="running"} 3')
      await new Promise((r) => setTimeout(r, 10))
      text = await scrape()
    }
    expect(seen.statements).toBeLessThan(10)
  })
})

describe('GET /metrics paced', () => {
  it('answers at most perSecond scrapes a second, and 429 to one whose turn is too far off', async () => {
    const m = createMetrics(t.db.orm, { processMetrics: false, perSecond: 10, maxWaitMs: 150 })
    const router = createRouter().route('/', metricsRoutes(m))
    router.onError(renderError)
    const started = performance.now()
    const replies = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const res = await router.request('/metrics')
        return { res, at: performance.now() - started, body: await res.text() }
      }),
    )
    // Turns at 0, 100 and 200 ms: the third is over 150 ms away and refused at once.
    expect(replies.map((r) => r.res.status)).toEqual([200, 200, 429])
    expect(replies[1]?.at).toBeGreaterThanOrEqual(95)
    expect(JSON.parse(replies[2]?.body ?? '{}').error.code).toBe('rate-limited')
    expect(replies[2]?.res.headers.get('retry-after')).toBe('1')
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
  const h = useTestApp({ metricsCacheMs: 0 })

  it('needs no token when PREFLIGHT_METRICS_TOKEN is not set', async () => {
    expect((await h.app.request('/metrics')).status).toBe(200)
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

describe('GET /metrics behind a metrics token', () => {
  const metricsToken = 'metrics-token-0123456789abcdef'
  const h = useTestApp({ metricsToken })

  const scrapeWith = (authorization?: string) =>
    h.app.request('/metrics', { headers: authorization ? { authorization } : {} })

  it('answers the token with the metrics', async () => {
    const res = await scrapeWith(`Bearer ${metricsToken}`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('preflight_dispatches')
  })

  it.each([
    ['no token', undefined],
    ['another token', 'Bearer metrics-token-0123456789abcdeX'],
    ['an API token, even admin', `Bearer ${tokens.admin}`],
    ['the token without Bearer', metricsToken],
  ])('refuses %s with 401 unauthorized', async (_what, authorization) => {
    const res = await scrapeWith(authorization)
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
  })
})
