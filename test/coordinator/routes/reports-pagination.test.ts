// GET /v1/reports keyset pagination: every row exactly once, even when created_at ties or differs by 1 µs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ReportsHarness, startReportsHarness } from '../../support/reports-app.js'
import { met, unmet } from '../../support/reports-fixtures.js'

let h: ReportsHarness
const seeded: string[] = []

beforeAll(async () => {
  h = await startReportsHarness()
  const times = [
    ...Array.from({ length: 8 }, () => '2026-02-01T00:00:00.000000Z'), // identical created_at
    ...Array.from({ length: 7 }, (_, i) => `2026-02-01T00:00:00.00010${i}Z`), // same millisecond
    ...Array.from({ length: 6 }, (_, i) => `2026-02-0${i + 2}T00:00:00Z`),
  ]
  for (const [i, at] of times.entries()) {
    // Two not-found results in one report: a reason filter must still list that report once.
    const results = i % 3 === 0 ? [unmet('pnpm'), unmet('yarn')] : [met('node')]
    seeded.push((await h.seed({ at, results })).dispatchId)
  }
}, 60_000)

afterAll(async () => {
  await h?.close()
})

async function walk(query: string, limit: number) {
  const pages: string[][] = []
  let cursor: string | null = null
  do {
    const after: string = cursor === null ? '' : `&cursor=${cursor}`
    const { status, body } = await h.get(`/v1/reports?limit=${limit}${query}${after}`)
    expect(status).toBe(200)
    pages.push(body.items.map((i: { dispatchId: string }) => i.dispatchId))
    cursor = body.nextCursor
  } while (cursor !== null && pages.length < 100)
  return pages
}

describe('GET /v1/reports pagination', () => {
  it('walks all reports exactly once, in the order of one big page', async () => {
    const [all] = await walk('', 500)
    const pages = await walk('', 3)
    expect(all).toHaveLength(seeded.length)
    expect(pages.flat()).toEqual(all)
    expect(new Set(pages.flat()).size).toBe(seeded.length)
  })

  it('keeps every page at the limit until the last', async () => {
    const pages = await walk('', 4)
    expect(pages.map((p) => p.length)).toEqual([4, 4, 4, 4, 4, 1])
  })

  it('answers a null nextCursor when the last page is exactly full', async () => {
    const pages = await walk('', seeded.length)
    expect(pages).toHaveLength(1)
  })

  it('keeps the filters across pages', async () => {
    const [all] = await walk('&outcome=unmet', 500)
    const pages = await walk('&outcome=unmet', 2)
    expect(all).toHaveLength(7)
    expect(pages.flat()).toEqual(all)
  })

  it('walks a reason filter newest first, each report once, across ties', async () => {
    const [unmetAll] = await walk('&outcome=unmet', 500)
    // alone (the results are walked) and with a report filter (the reports are walked)
    for (const filter of [
      '&reason=not-found',
      '&kind=exec&reason=not-found',
      '&reason=not-found&outcome=unmet',
      '&kind=exec&reason=not-found&worker=w-1',
    ]) {
      const [all] = await walk(filter, 500)
      expect(all).toEqual(unmetAll)
      expect((await walk(filter, 2)).flat()).toEqual(all)
      expect((await walk(filter, 1)).flat()).toEqual(all)
    }
    expect(await walk('&kind=paths&reason=not-found', 500)).toEqual([[]])
    expect(await walk('&kind=exec&reason=not-found&outcome=met', 500)).toEqual([[]])
    expect((await walk('&kind=exec', 2)).flat()).toEqual((await walk('', 500)).flat())
    expect((await walk('&kind=exec&outcome=unmet', 1)).flat()).toEqual(unmetAll)
  })

  it('honours since and until to the microsecond', async () => {
    const [all] = await walk('&since=2026-02-01T00:00:00.000103Z&until=2026-02-01T00:00:00.000106Z', 500)
    expect(all).toEqual(seeded.slice(11, 14).reverse())
    const window = '&since=2026-02-01T00:00:00.000103Z&until=2026-02-01T00:00:00.000106Z'
    expect(await walk(`${window}&reason=not-found`, 500)).toEqual([[seeded[12]]])
  })
})
