// GET /v1/reports/summary: counts and drift (first unmet/error after the latest met) on a hand-made history.

import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SummaryPage } from '../../../src/contract/index.js'
import { type ReportsHarness, startReportsHarness } from '../../support/reports-app.js'
import { errored, met, unmet } from '../../support/reports-fixtures.js'

let h: ReportsHarness
const t = (day: number) => `2026-03-0${day}T12:00:00.000Z`

beforeAll(async () => {
  h = await startReportsHarness()
  const pnpm = [met('pnpm'), met('pnpm'), unmet('pnpm'), errored('pnpm', 'exec'), unmet('pnpm')]
  const node = [unmet('node'), met('node'), met('node')]
  const worktree = [unmet('worktree', 'git', 'not-a-worktree'), unmet('worktree', 'git', 'not-a-worktree')]
  const flap = [met('dist/**', 'paths'), unmet('dist/**', 'paths'), met('dist/**', 'paths')]
  flap.push(unmet('dist/**', 'paths'), unmet('dist/**', 'paths'))
  for (let day = 1; day <= 5; day++) {
    const results = [pnpm, node, worktree, flap].flatMap((history) => history[day - 1] ?? [])
    await h.seed({ subagent: 'web', at: t(day), results })
  }
  await h.seed({ subagent: 'api', at: t(1), results: [met('git')] })
  // what observed dispatches of ops used and did not declare (as a worker's completion carries it)
  const observed = async (day: number, undeclared: object[]) => {
    const { dispatchId } = await h.seed({ subagent: 'ops', at: t(day), results: [] })
    const completion = { status: 'failed', exitCode: 127, undeclared, at: t(day) }
    await h.db.execute(
      sql`UPDATE dispatches SET status = 'failed', completion = ${JSON.stringify(completion)}::jsonb, ended_at = ${t(day)}::timestamptz WHERE id = ${dispatchId}`,
    )
  }
  const pnpmMissing = { kind: 'exec', name: 'yarn', state: 'missing', searched: '/usr/bin:/bin' }
  const jq = { kind: 'exec', name: 'jq', state: 'present', path: '/usr/bin/jq' }
  await observed(6, [pnpmMissing, jq])
  await observed(7, [pnpmMissing, { kind: 'paths', path: 'notes/plan.md', state: 'missing' }])
}, 60_000)

afterAll(async () => {
  await h?.close()
})

async function summary(query = '') {
  return h.get(`/v1/reports/summary${query}`)
}
const row = (body: SummaryPage, requirement: string) => body.items.find((i) => i.requirement === requirement)

describe('GET /v1/reports/summary', () => {
  it('counts, for the subagent asked for, what its observed dispatches used and no requirement declares', async () => {
    const { body } = await summary('?subagent=ops')
    expect((body as SummaryPage).undeclared).toEqual([
      { subagent: 'ops', kind: 'exec', need: 'jq', missing: 0, present: 1, lastAt: t(6) },
      { subagent: 'ops', kind: 'exec', need: 'yarn', missing: 2, present: 0, lastAt: t(7) },
      { subagent: 'ops', kind: 'paths', need: 'notes/plan.md', missing: 1, present: 0, lastAt: t(7) },
    ])
    // in the window only; and for the subagents of a page, none of which here has any
    const early = (await summary(`?subagent=ops&until=${t(7)}`)).body as SummaryPage
    expect(early.undeclared?.map((u) => `${u.need} ${u.missing}/${u.present}`)).toEqual([
      'jq 0/1',
      'yarn 1/0',
    ])
    expect(((await summary()).body as SummaryPage).undeclared).toEqual([])
  })

  it('lists one row per subagent and requirement, ordered by subagent, kind, requirement', async () => {
    const { status, body } = await summary()
    expect(status).toBe(200)
    expect((body as SummaryPage).items.map((i) => `${i.subagent}/${i.kind}/${i.requirement}`)).toEqual([
      'api/exec/git',
      'web/exec/node',
      'web/exec/pnpm',
      'web/git/worktree',
      'web/paths/dist/**',
    ])
    expect(body.nextCursor).toBeNull()
  })

  it('counts checks, met, unmet and error', async () => {
    expect(row((await summary('?subagent=web')).body, 'pnpm')).toMatchObject({
      checks: 5,
      met: 2,
      unmet: 2,
      error: 1,
    })
  })

  it('dates drift at the first failure after the latest met', async () => {
    const pnpm = row((await summary()).body, 'pnpm')
    expect(pnpm).toMatchObject({ lastMetAt: t(2), firstUnmetAfterMetAt: t(3) })
  })

  it('dates drift at the start of the current failing streak when a requirement flaps', async () => {
    expect(row((await summary()).body, 'dist/**')).toMatchObject({
      lastMetAt: t(3),
      firstUnmetAfterMetAt: t(4),
    })
  })

  it('reports no drift once the latest result is met again', async () => {
    expect(row((await summary()).body, 'node')).toMatchObject({ lastMetAt: t(3), firstUnmetAfterMetAt: null })
  })

  it('reports no drift for a requirement that was never met', async () => {
    expect(row((await summary()).body, 'worktree')).toMatchObject({
      lastMetAt: null,
      firstUnmetAfterMetAt: null,
    })
  })

  it('computes every figure inside since and until', async () => {
    const { body } = await summary(`?subagent=web&since=${t(2)}&until=${t(4)}`)
    expect(row(body, 'dist/**')).toMatchObject({ checks: 2, lastMetAt: t(3), firstUnmetAfterMetAt: null })
    expect(row(body, 'pnpm')).toMatchObject({
      checks: 2,
      met: 1,
      lastMetAt: t(2),
      firstUnmetAfterMetAt: t(3),
    })
  })

  it('filters by subagent', async () => {
    const { body } = await summary('?subagent=api')
    expect(body.items).toEqual([
      expect.objectContaining({ subagent: 'api', requirement: 'git', checks: 1, met: 1 }),
    ])
  })

  it('pages through every row exactly once', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const { body }: { body: SummaryPage } = await summary(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      seen.push(...body.items.map((i) => `${i.subagent}/${i.requirement}`))
      cursor = body.nextCursor
    } while (cursor)
    expect(seen).toEqual(['api/git', 'web/node', 'web/pnpm', 'web/worktree', 'web/dist/**'])
  })

  it('answers 400 invalid-cursor for a cursor of the reports list', async () => {
    const foreign = Buffer.from('["2026-01-01T00:00:00.000000Z",1]').toString('base64url')
    const { status, body } = await summary(`?cursor=${foreign}`)
    expect(status).toBe(400)
    expect(body.error.code).toBe('invalid-cursor')
  })

  it('answers 400 invalid-request for a bad since', async () => {
    const { status, body } = await summary('?since=last-week')
    expect(status).toBe(400)
    expect(body.error.code).toBe('invalid-request')
  })
})
