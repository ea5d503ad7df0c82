// GET /v1/dispatches/endings: dispatches as they end, oldest ending first after a cursor, filtered like
// the listing; a long-poll woken by every ending, looking again on its own only as a safety net.
import { describe, expect, it } from 'vitest'
import { encodeCursor } from '../../../src/coordinator/db/cursor.js'
import { listEndings } from '../../../src/coordinator/db/dispatch-list.js'
import { sweepLeases } from '../../../src/coordinator/db/leases.js'
import { type TestApp, useTestApp } from '../../support/app.js'
import { cancelled, claimed, exited, preflightFailed, setupFailed } from '../../support/dispatch-states.js'
import { definition, lapseLease } from '../../support/fixtures.js'
import { waitFor } from '../../support/wait.js'

const web = definition('web')
const api = definition('api')

const endings = (h: TestApp, query: string) => h.call('GET', `/v1/dispatches/endings${query}`)
const idsOf = (body: { items: { id: string }[] }) => body.items.map((i) => i.id)

// The cursor of "now": what a watch starts from.
async function now(h: TestApp): Promise<string> {
  const r = await endings(h, '')
  expect(r.status).toBe(200)
  expect(r.body.items).toEqual([])
  return r.body.nextCursor
}

describe('GET /v1/dispatches/endings', () => {
  // settle 0: an ending is answered at once; no polling to speak of: only a wake-up answers early
  const h = useTestApp({ maxAttempts: 1, endingsSettleMs: 0, endingsPollMs: 60_000, endingsWaitCapMs: 5_000 })

  it('answers the endings after the cursor, oldest first, and not those before', async () => {
    await setupFailed(h, { def: web })
    const from = await now(h)
    const a = await exited(h, 2, { def: api })
    const b = await preflightFailed(h, { def: web })
    const c = await cancelled(h, api)
    const r = await endings(h, `?cursor=${from}`)
    expect(idsOf(r.body)).toEqual([a.id, b.id, c.id])
    expect(r.body.items[0]).toMatchObject({ status: 'failed', exitCode: 2, endedAt: expect.any(String) })
    // and from its cursor on, nothing more
    expect((await endings(h, `?cursor=${r.body.nextCursor}`)).body.items).toEqual([])
  })

  it('takes the listing’s filters', async () => {
    const from = await now(h)
    const a = await setupFailed(h, { def: web, reason: 'clone-failed' })
    const b = await exited(h, 0, { def: api })
    const c = await preflightFailed(h, { def: api })
    const ids = async (query: string) => idsOf((await endings(h, `?cursor=${from}${query}`)).body)
    expect(await ids('&status=setup_failed&status=preflight_failed')).toEqual([a.id, c.id])
    expect(await ids('&subagent=api')).toEqual([b.id, c.id])
    expect(await ids('&reason=clone-failed')).toEqual([a.id])
    expect(await ids('&reason=not-found&subagent=web')).toEqual([])
    expect(await ids('&worker=w1&status=succeeded')).toEqual([b.id])
  })

  it('starts at since when there is no cursor', async () => {
    const from = await now(h)
    const a = await exited(h, 1, { def: web })
    const endedAt = (await endings(h, `?cursor=${from}`)).body.items[0].endedAt
    expect(idsOf((await endings(h, `?since=${endedAt}`)).body)).toContain(a.id)
  })

  it('goes on from a since in the future, not from now', async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const r = await endings(h, `?since=${later}`)
    expect(r.body.items).toEqual([])
    await exited(h, 1)
    expect((await endings(h, `?cursor=${r.body.nextCursor}`)).body.items).toEqual([])
  })

  it('pages with the cursor: each ending once', async () => {
    const from = await now(h)
    const made = [await exited(h, 1), await exited(h, 1), await exited(h, 1)].map((x) => x.id)
    const seen: string[] = []
    let cursor = from
    for (let i = 0; i < 4; i++) {
      const r = await endings(h, `?limit=1&cursor=${cursor}`)
      seen.push(...idsOf(r.body))
      cursor = r.body.nextCursor
    }
    expect(seen).toEqual(made)
  })

  it('waits for the next ending and answers it as soon as this coordinator sees it', async () => {
    const from = await now(h)
    const waiting = endings(h, `?cursor=${from}&waitMs=5000&status=setup_failed`)
    await waitFor(() => h.endings.waiting === 1)
    const started = performance.now()
    const a = await setupFailed(h)
    const r = await waiting
    expect(idsOf(r.body)).toEqual([a.id])
    // woken, not polled (the poll is a minute away; the wait would end empty after 5 s)
    expect(performance.now() - started).toBeLessThan(4_000)
  })

  it('wakes for a cancel and for a report that fails the dispatch', async () => {
    for (const end of [() => cancelled(h), () => preflightFailed(h)]) {
      const from = await now(h)
      const waiting = endings(h, `?cursor=${from}&waitMs=5000`)
      await waitFor(() => h.endings.waiting === 1)
      const started = performance.now()
      const a = await end()
      expect(idsOf((await waiting).body)).toEqual([a.id])
      expect(performance.now() - started).toBeLessThan(4_000)
    }
  })

  it('answers no items and a cursor to go on from when nothing ended within waitMs', async () => {
    const from = await now(h)
    const r = await endings(h, `?cursor=${from}&waitMs=50`)
    expect(r.status).toBe(200)
    expect(r.body.items).toEqual([])
    const a = await exited(h, 1)
    expect(idsOf((await endings(h, `?cursor=${r.body.nextCursor}`)).body)).toEqual([a.id])
  })

  it('answers an ending only once it is settleMs old', async () => {
    const from = await now(h)
    const a = await exited(h, 4)
    const young = await listEndings(h.t.db.orm, { limit: 10, cursor: from, settleMs: 60_000 })
    expect(young.items).toEqual([])
    // the horizon stayed behind the ending: a cursor from it still finds it
    const settled = await listEndings(h.t.db.orm, { limit: 10, cursor: young.nextCursor, settleMs: 0 })
    expect(settled.items.map((i) => i.id)).toEqual([a.id])
  })

  it('refuses a cursor it did not issue and a waitMs over its bound', async () => {
    const key = ['2026-01-01T00:00:00.000000Z', '00000000-0000-4000-8000-000000000000']
    for (const [query, code] of [
      [`?cursor=${encodeCursor(key)}`, 'invalid-cursor'],
      [`?cursor=${encodeCursor([...key, 'created'])}`, 'invalid-cursor'],
      ['?cursor=bm90IGpzb24', 'invalid-cursor'],
      ['?waitMs=600001', 'invalid-request'],
      ['?waitMs=-1', 'invalid-request'],
      ['?status=over', 'invalid-request'],
    ]) {
      const r = await endings(h, query as string)
      expect(r.status, query).toBe(400)
      expect(r.body.error.code, query).toBe(code)
    }
  })
})

describe('GET /v1/dispatches/endings, an ending not yet settled when it looked', () => {
  // endings answered once 1 s old (the default); the poll further away than the test: only the wake-up
  // that came before the long-poll looked can answer it in time
  const h = useTestApp({
    maxAttempts: 1,
    endingsSettleMs: 1_000,
    endingsPollMs: 60_000,
    endingsWaitCapMs: 8_000,
  })

  it('answers it once settled, not at its next poll', async () => {
    const from = await now(h)
    const a = await exited(h, 1)
    const started = performance.now()
    const r = await endings(h, `?cursor=${from}&waitMs=8000`)
    expect(idsOf(r.body)).toEqual([a.id])
    expect(performance.now() - started).toBeLessThan(4_000)
  })
})

describe('GET /v1/dispatches/endings across coordinators', () => {
  // an ending no wake-up announced (a notification lost unnoticed): the long-poll finds it by looking
  // again; a request's deadline is shorter than the wait: a long-poll's starts after its capped waitMs
  const h = useTestApp({
    maxAttempts: 1,
    endingsSettleMs: 0,
    endingsPollMs: 50,
    endingsWaitCapMs: 1_000,
    requestTimeoutMs: 300,
  })

  it('finds an ending no wake-up announced by polling', async () => {
    const from = await now(h)
    const { id } = await claimed(h)
    const waiting = endings(h, `?cursor=${from}&waitMs=1000`)
    await waitFor(() => h.endings.waiting === 1)
    await lapseLease(h, id)
    // the sweep of another coordinator: this app's waker is not told
    await sweepLeases(h.t.db.orm)
    expect(idsOf((await waiting).body)).toEqual([id])
  })

  it('waits no longer than its cap, whatever waitMs asks', async () => {
    const from = await now(h)
    const started = performance.now()
    const r = await endings(h, `?cursor=${from}&waitMs=600000`)
    expect(r.status).toBe(200)
    expect(r.body.items).toEqual([])
    expect(performance.now() - started).toBeLessThan(10_000)
  })
})
