// The embedded default: the same report queries on PGlite (driver differences: jsonb, timestamps).

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ReportPage } from '../../../src/contract/index.js'
import { type ReportsHarness, startReportsHarness } from '../../support/reports-app.js'
import { met, unmet } from '../../support/reports-fixtures.js'

let h: ReportsHarness
const seeded: string[] = []

beforeAll(async () => {
  h = await startReportsHarness({ pglite: true })
  const times = ['2026-04-01T00:00:00.000001Z', '2026-04-01T00:00:00.000002Z', '2026-04-01T00:00:00.000002Z']
  times.push('2026-04-02T00:00:00Z', '2026-04-03T00:00:00Z')
  for (const [i, at] of times.entries()) {
    seeded.push((await h.seed({ at, results: [i < 3 ? met('pnpm') : unmet('pnpm')] })).dispatchId)
  }
}, 60_000)

afterAll(async () => {
  await h?.close()
})

describe('reports on PGlite', () => {
  it('pages through reports that tie to the microsecond, each exactly once', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const { body }: { body: ReportPage } = await h.get(
        `/v1/reports?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      )
      seen.push(...body.items.map((i) => i.dispatchId))
      cursor = body.nextCursor
    } while (cursor)
    expect(seen.sort()).toEqual([...seeded].sort())
  })

  it('returns results as parsed JSON', async () => {
    const { body } = await h.get('/v1/reports?limit=1')
    expect(body.items[0].results).toEqual([expect.objectContaining({ requirement: 'pnpm', status: 'unmet' })])
  })

  it('windows by since and until', async () => {
    const { body } = await h.get('/v1/reports?since=2026-04-01T00:00:00.000002Z&until=2026-04-03T00:00:00Z')
    expect(body.items.map((i: { createdAt: string }) => i.createdAt)).toEqual([
      '2026-04-02T00:00:00.000Z',
      '2026-04-01T00:00:00.000Z',
      '2026-04-01T00:00:00.000Z',
    ])
    const summary = await h.get('/v1/reports/summary?until=2026-04-02T00:00:00Z')
    expect(summary.body.items[0]).toMatchObject({ checks: 3, firstUnmetAfterMetAt: null })
  })

  it('filters by kind and reason, alone and with a report filter, paging one by one', async () => {
    const unmetOnes = seeded.slice(3).reverse()
    for (const filter of [
      'reason=not-found',
      'kind=exec&reason=not-found',
      'reason=not-found&outcome=unmet',
    ]) {
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const { body }: { body: ReportPage } = await h.get(
          `/v1/reports?${filter}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        )
        seen.push(...body.items.map((i) => i.dispatchId))
        cursor = body.nextCursor
      } while (cursor)
      expect(seen).toEqual(unmetOnes)
    }
    expect((await h.get('/v1/reports?kind=exec&worker=w-1')).body.items).toHaveLength(seeded.length)
  })

  it('summarises drift', async () => {
    const { body } = await h.get('/v1/reports/summary')
    expect(body.items).toEqual([
      expect.objectContaining({
        checks: 5,
        lastMetAt: '2026-04-01T00:00:00.000Z',
        firstUnmetAfterMetAt: '2026-04-02T00:00:00.000Z',
      }),
    ])
  })
})
