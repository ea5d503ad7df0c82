// GET /v1/reports: each filter narrows, newest first, keyset pages, bad input → 400 envelope.
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reportsQuery } from '../../../src/coordinator/db/reports.js'
import { type ReportsHarness, startReportsHarness } from '../../support/reports-app.js'
import { errored, met, unmet } from '../../support/reports-fixtures.js'

let h: ReportsHarness
const ids: Record<string, string> = {}

async function list(query: string) {
  return h.get(`/v1/reports${query}`)
}
const dispatchesOf = (body: { items: { dispatchId: string }[] }) => body.items.map((i) => i.dispatchId)

beforeAll(async () => {
  h = await startReportsHarness()
  const seeds = {
    a: { subagent: 'web', worker: 'w-1', at: '2026-01-01T10:00:00Z', results: [met('node'), met('git')] },
    b: { subagent: 'web', worker: 'w-2', at: '2026-01-02T10:00:00Z', results: [met('node'), unmet('pnpm')] },
    c: { subagent: 'api', worker: 'w-1', at: '2026-01-03T10:00:00Z', results: [errored('src/**/*.ts')] },
    d: {
      subagent: 'api',
      worker: 'w-2',
      at: '2026-01-04T10:00:00Z',
      results: [unmet('dist/index.js', 'paths', 'no-match')],
    },
  }
  for (const [key, seed] of Object.entries(seeds)) ids[key] = (await h.seed(seed)).dispatchId
}, 60_000)

afterAll(async () => {
  await h?.close()
})

describe('GET /v1/reports', () => {
  it('lists every report newest first', async () => {
    const { status, body } = await list('')
    expect(status).toBe(200)
    expect(dispatchesOf(body)).toEqual([ids.d, ids.c, ids.b, ids.a])
    expect(body.nextCursor).toBeNull()
  })

  it('returns the wire shape of an item with its results', async () => {
    const { body } = await list('?subagent=web&outcome=unmet')
    expect(body.items).toEqual([
      {
        dispatchId: ids.b,
        subagent: 'web',
        subagentVersion: 1,
        workerId: 'w-2',
        attempt: 1,
        outcome: 'unmet',
        results: [
          expect.objectContaining({ requirement: 'node' }),
          expect.objectContaining({ requirement: 'pnpm' }),
        ],
        createdAt: '2026-01-02T10:00:00.000Z',
      },
    ])
  })

  it('filters by outcome', async () => {
    expect(dispatchesOf((await list('?outcome=unmet')).body)).toEqual([ids.d, ids.b])
  })

  it('filters by subagent', async () => {
    expect(dispatchesOf((await list('?subagent=api')).body)).toEqual([ids.d, ids.c])
  })

  it('filters by worker', async () => {
    expect(dispatchesOf((await list('?worker=w-1')).body)).toEqual([ids.c, ids.a])
  })

  it('filters by the kind of any result', async () => {
    expect(dispatchesOf((await list('?kind=paths')).body)).toEqual([ids.d, ids.c])
  })

  it('filters by the reason of any result', async () => {
    expect(dispatchesOf((await list('?reason=not-found')).body)).toEqual([ids.b])
  })

  it('matches kind and reason on the same result', async () => {
    expect(dispatchesOf((await list('?kind=exec&reason=no-match')).body)).toEqual([])
    expect(dispatchesOf((await list('?kind=paths&reason=no-match')).body)).toEqual([ids.d])
  })

  it('includes since and excludes until', async () => {
    const { body } = await list('?since=2026-01-02T10:00:00Z&until=2026-01-04T10:00:00Z')
    expect(dispatchesOf(body)).toEqual([ids.c, ids.b])
  })

  it('combines filters', async () => {
    expect(dispatchesOf((await list('?subagent=api&worker=w-1&outcome=error')).body)).toEqual([ids.c])
  })
})

describe('GET /v1/reports bad input', () => {
  const cases = [
    ['a cursor that is not base64url', '?cursor=***', 'invalid-cursor'],
    [
      'a cursor that decodes to something else',
      `?cursor=${Buffer.from('{"a":1}').toString('base64url')}`,
      'invalid-cursor',
    ],
    [
      'a cursor with a non-ISO time',
      `?cursor=${Buffer.from('["yesterday",1]').toString('base64url')}`,
      'invalid-cursor',
    ],
    [
      'a cursor with a day the calendar lacks',
      `?cursor=${Buffer.from('["2026-02-30T00:00:00.000000Z",1]').toString('base64url')}`,
      'invalid-cursor',
    ],
    ['a since on a day the calendar lacks', '?since=2026-02-30T00:00:00Z', 'invalid-request'],
    ['a limit of 0', '?limit=0', 'invalid-request'],
    ['a limit above 500', '?limit=501', 'invalid-request'],
    ['a limit that is not a number', '?limit=ten', 'invalid-request'],
    ['a since that is not ISO', '?since=yesterday', 'invalid-request'],
    ['an until without an offset', '?until=2026-01-01T10:00:00', 'invalid-request'],
    ['an unknown outcome', '?outcome=failed', 'invalid-request'],
    ['an unknown kind', '?kind=env', 'invalid-request'],
    ['a reason that is not a code', '?reason=Not%20Found', 'invalid-request'],
    ['an unknown parameter', '?subagnet=web', 'invalid-request'],
  ] as const
  for (const [what, query, code] of cases) {
    it(`answers 400 ${code} for ${what}`, async () => {
      const { status, body } = await list(query)
      expect(status).toBe(400)
      expect(body.error.code).toBe(code)
      expect(typeof body.error.message).toBe('string')
    })
  }

  // A kind is written into the statement as a literal (its partial index must match it): the query
  // takes nothing but a kind's name, whatever reaches it past the route.
  it('never writes anything but a kind into the statement', async () => {
    const kind = "exec}' OR true OR '{" as 'exec'
    expect(() => reportsQuery(h.db, { kind, limit: 1 })).toThrow()
  })
})

// Runs last: it adds a report the filter tests above do not expect.
describe('GET /v1/reports after a report-incomplete verdict', () => {
  it('shows the results of a report-incomplete verdict as the coordinator stored them', async () => {
    const { dispatchId } = await h.seed({
      subagent: 'judged',
      worker: 'w-judge',
      at: '2025-12-01T00:00:00Z',
      results: [met('node')],
    })
    // as the coordinator stores such a verdict: the judged list, and a row for the result not met
    const missing = {
      kind: 'exec',
      requirement: 'pnpm',
      status: 'unmet',
      reason: 'report-incomplete',
      observed: { missing: true },
      durationMs: 0,
    }
    await h.db.execute(sql`insert into requirement_results (report_id, position, subagent_name, kind,
        requirement, status, reason, observed, duration_ms, created_at)
      select id, 1, subagent_name, 'exec', 'pnpm', 'unmet', 'report-incomplete', '{"missing":true}', 0, created_at
      from preflight_reports where dispatch_id = ${dispatchId}`)
    await h.db.execute(
      sql`update preflight_reports set reason = 'report-incomplete', outcome = 'unmet',
            judged = (report -> 'results') || ${JSON.stringify([missing])}::jsonb where dispatch_id = ${dispatchId}`,
    )
    const { body } = await list('?reason=report-incomplete')
    expect(body.items).toHaveLength(1)
    expect(body.items[0].results).toEqual([
      { kind: 'exec', requirement: 'node', status: 'met', observed: met('node').observed, durationMs: 1 },
      missing,
    ])
  })
})
