// GET /v1/dispatches keyset pagination: every dispatch exactly once, newest first, when created_at ties
// or differs by 1 µs, with any filter, and while new dispatches arrive during the walk.
import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { DISPATCH_STATUSES } from '../../../src/contract/index.js'
import { useTestApp } from '../../support/app.js'
import { queued } from '../../support/dispatch-states.js'
import { definition } from '../../support/fixtures.js'

interface Seed {
  id: string
  at: string
  status: (typeof DISPATCH_STATUSES)[number]
  subagent: string
  worker: string
  reason?: string
}

// 8 identical instants, 7 a microsecond apart, 9 a day apart; statuses, subagents and reasons spread.
const times = [
  ...Array.from({ length: 8 }, () => '2026-02-01T00:00:00.000000Z'),
  ...Array.from({ length: 7 }, (_, i) => `2026-02-01T00:00:00.00010${i}Z`),
  ...Array.from({ length: 9 }, (_, i) => `2026-02-${String(i + 2).padStart(2, '0')}T00:00:00.000000Z`),
]
const seeds: Seed[] = times.map((at, i) => ({
  id: randomUUID(),
  at,
  status: DISPATCH_STATUSES[i % DISPATCH_STATUSES.length] as Seed['status'],
  subagent: i % 2 ? 'web' : 'api',
  worker: `w${i % 3}`,
  ...(i % 4 === 0 ? { reason: 'not-found' } : {}),
}))

describe('GET /v1/dispatches pagination', () => {
  const h = useTestApp()

  beforeAll(async () => {
    const db = h.t.db.orm
    for (const name of ['web', 'api'])
      await db.execute(sql`INSERT INTO subagent_versions (name, version, hash, definition)
        VALUES (${name}, 1, ${'0'.repeat(64)}, ${JSON.stringify({ name })}::jsonb)`)
    for (const s of seeds) {
      const at = sql`${s.at}::text::timestamptz`
      await db.execute(sql`INSERT INTO dispatches (id, subagent_name, subagent_version, workspace, status,
          worker_id, created_at) VALUES (${s.id}, ${s.subagent}, 1, '{"repo":"x"}', ${s.status}, ${s.worker}, ${at})`)
      if (s.reason)
        await db.execute(sql`INSERT INTO dispatch_reasons (dispatch_id, reason, status, created_at, subagent_name,
            worker_id) VALUES (${s.id}, ${s.reason}, ${s.status}, ${at}, ${s.subagent}, ${s.worker})`)
    }
  })

  // Every page of a walk, following nextCursor; `between` runs after each page.
  async function walk(query: string, limit: number, between?: () => Promise<void>) {
    const pages: string[][] = []
    let cursor: string | null = null
    do {
      const after: string = cursor === null ? '' : `&cursor=${cursor}`
      const { status, body } = await h.call('GET', `/v1/dispatches?limit=${limit}${query}${after}`)
      expect(status).toBe(200)
      pages.push(body.items.map((i: { id: string }) => i.id))
      cursor = body.nextCursor
      await between?.()
    } while (cursor !== null && pages.length < 100)
    return pages
  }

  // The seeds a filter matches, newest first (ties: the larger id first).
  const expected = (match: (s: Seed) => boolean) =>
    seeds
      .filter(match)
      .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
      .map((s) => s.id)

  it('walks every dispatch once, newest first, whatever the page size', async () => {
    const all = expected(() => true)
    expect((await walk('', 500)).flat()).toEqual(all)
    for (const limit of [1, 3, 7]) expect((await walk('', limit)).flat()).toEqual(all)
  })

  it('keeps every page at the limit until the last, and ends on a full page with no cursor', async () => {
    expect((await walk('', 5)).map((p) => p.length)).toEqual([5, 5, 5, 5, 4])
    expect(await walk('', seeds.length)).toHaveLength(1)
  })

  it('keeps each filter across pages', async () => {
    const filters: [string, (s: Seed) => boolean][] = [
      ['&status=queued', (s) => s.status === 'queued'],
      ['&status=failed&status=expired', (s) => s.status === 'failed' || s.status === 'expired'],
      ['&subagent=web', (s) => s.subagent === 'web'],
      ['&worker=w1', (s) => s.worker === 'w1'],
      [
        '&subagent=api&status=queued&status=claimed',
        (s) => s.subagent === 'api' && ['queued', 'claimed'].includes(s.status),
      ],
      ['&reason=not-found', (s) => s.reason === 'not-found'],
      ['&reason=not-found&subagent=api', (s) => s.reason === 'not-found' && s.subagent === 'api'],
      ['&reason=not-found&worker=w0', (s) => s.reason === 'not-found' && s.worker === 'w0'],
    ]
    for (const [query, match] of filters) {
      const want = expected(match)
      expect(want.length, query).toBeGreaterThan(1)
      expect((await walk(query, 2)).flat(), query).toEqual(want)
    }
  })

  it('walks a window to the microsecond', async () => {
    const window = '&since=2026-02-01T00:00:00.000103Z&until=2026-02-01T00:00:00.000106Z'
    const want = expected(
      (s) => s.at >= '2026-02-01T00:00:00.000103Z' && s.at < '2026-02-01T00:00:00.000106Z',
    )
    expect(want).toHaveLength(3)
    expect((await walk(window, 1)).flat()).toEqual(want)
  })

  it('neither repeats nor skips a dispatch while new ones are created during the walk', async () => {
    const all = expected(() => true)
    const def = definition('web-live')
    const pages = await walk('', 4, async () => {
      await queued(h, def)
    })
    expect(pages.flat()).toEqual(all)
    // the new ones are newest: a walk from the start sees them first
    expect((await walk('', 500)).flat().slice(pages.length)).toEqual(all)
  })
})
