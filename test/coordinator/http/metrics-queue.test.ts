// The gauges an autoscaler reads: queued and not-ended dispatches by label set, counted in the database,
// with a bounded number of series whatever labels orchestrators choose.
import { describe, expect, it } from 'vitest'
import { createMetrics, MAX_LABEL_SETS } from '../../../src/coordinator/http/metrics.js'
import { useTestApp } from '../../support/app.js'
import { claim, definition, queueDispatch } from '../../support/fixtures.js'

const h = useTestApp()

const scrape = () => createMetrics(h.t.db.orm, { processMetrics: false, cacheMs: 0 }).exposition()
const series = (text: string, name: string) =>
  Object.fromEntries(
    [...text.matchAll(new RegExp(`^${name}\\{labels="([^"]*)"\\} (\\S+)$`, 'gm'))].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  )

describe('preflight_queued_dispatches and preflight_open_dispatches', () => {
  it('count by label set, sorted, with "" for none, and claimed ones as open only', async () => {
    expect(series(await scrape(), 'preflight_queued_dispatches')).toEqual({ '': 0 })
    const def = definition()
    await queueDispatch(h, def)
    await queueDispatch(h, def)
    await queueDispatch(h, def, { labels: ['os=linux', 'gpu=a100'] })
    await queueDispatch(h, def, { labels: ['gpu=a100', 'os=linux'] })
    await claim(h)
    const text = await scrape()
    expect(series(text, 'preflight_queued_dispatches')).toEqual({ '': 1, 'gpu=a100,os=linux': 2 })
    expect(series(text, 'preflight_open_dispatches')).toEqual({ '': 2, 'gpu=a100,os=linux': 2 })
  })

  it(`name at most ${MAX_LABEL_SETS} label sets, the largest, and sum the rest under "(other)"`, async () => {
    const def = definition()
    for (let i = 0; i < MAX_LABEL_SETS + 5; i++) await queueDispatch(h, def, { labels: [`team=t${i}`] })
    // one set larger than the others: always among the named
    await queueDispatch(h, def, { labels: ['team=t24'] })
    const queued = series(await scrape(), 'preflight_queued_dispatches')
    // "", the named sets, "(other)"; the first test's gpu set (2 open) and team=t24 are among the named
    expect(Object.keys(queued)).toHaveLength(MAX_LABEL_SETS + 2)
    expect(queued).toMatchObject({ 'gpu=a100,os=linux': 2, 'team=t24': 2 })
    // 26 sets with queued dispatches: 20 named, 6 of one dispatch each summed
    expect(queued['(other)']).toBe(6)
    expect(Object.values(queued).reduce((a: number, b) => a + Number(b), 0)).toBe(
      1 + 2 + MAX_LABEL_SETS + 5 + 1,
    )
  })
})
