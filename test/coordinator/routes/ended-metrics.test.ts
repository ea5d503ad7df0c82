// The routes count each dispatch they end once: a completion by its status and reason, an aborting
// report as preflight_failed, a cancel as cancelled; a retried write is not counted again.
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'

const h = useTestApp({ metricsCacheMs: 0 })
const ended = async (status: string, reason: string) => {
  const text = await (await h.app.request('/metrics')).text()
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`preflight_dispatches_ended_total{status="${status}",reason="${reason}"}`))
  return Number(line?.split(' ')[1] ?? 0)
}

describe('dispatches ended, in /metrics', () => {
  it('counts a setup failure by its reason, once however often it is sent', async () => {
    const id = await queueDispatch(h, definition('ended-setup'))
    const c = await claim(h)
    const body = {
      ...fenceOf(c),
      status: 'setup_failed',
      reason: 'clone-failed',
      detail: 'no such repository',
    }
    for (let i = 0; i < 2; i++)
      expect((await h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })).status).toBe(
        200,
      )
    expect(await ended('setup_failed', 'clone-failed')).toBe(1)
  })

  it('counts an aborting report as preflight_failed by its outcome, once', async () => {
    const def = definition('ended-preflight')
    const id = await queueDispatch(h, def)
    const c = await claim(h)
    const body = { ...fenceOf(c), report: reportFor(def, 'unmet') }
    for (let i = 0; i < 2; i++)
      expect((await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body })).status).toBe(
        200,
      )
    expect(await ended('preflight_failed', 'unmet')).toBe(1)
  })

  it('counts an agent exit as succeeded or failed', async () => {
    const def = definition('ended-agent')
    for (const exitCode of [0, 3]) {
      const id = await queueDispatch(h, def)
      const c = await claim(h)
      await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
        role: 'worker',
        body: { ...fenceOf(c), report: reportFor(def) },
      })
      await h.call('POST', `/v1/dispatches/${id}/complete`, {
        role: 'worker',
        body: { ...fenceOf(c), exitCode },
      })
    }
    expect(await ended('succeeded', '')).toBe(1)
    expect(await ended('failed', '')).toBe(1)
  })

  // the worker's completion of a dispatch cancelled under its lease keeps its output: no second count
  it('counts a cancel once: not again when it is repeated, nor when the worker completes what was cancelled', async () => {
    const def = definition('ended-cancel')
    const queued = await queueDispatch(h, def)
    const running = await queueDispatch(h, def)
    const c = await claim(h)
    const claimed = c.dispatch.id
    expect([queued, running]).toContain(claimed)
    for (const id of [queued, running, queued])
      expect(
        (await h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator', body: { reason: 'r' } }))
          .status,
      ).toBe(200)
    await h.call('POST', `/v1/dispatches/${claimed}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), exitCode: 0 },
    })
    expect(await ended('cancelled', '')).toBe(2)
  })
})
