import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import type { PreflightReport } from '../../../src/contract/index.js'
import { rows } from '../../../src/coordinator/db/client.js'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'

describe('preflight reports', () => {
  const h = useTestApp()

  // A fresh dispatch claimed by a worker; returns what the worker needs to write to it.
  async function claimed() {
    const id = await queueDispatch(h)
    await h.t.db.orm.execute(
      sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued' AND id <> ${id}`,
    )
    const c = await claim(h)
    expect(c.dispatch.id).toBe(id)
    const put = (report: PreflightReport, fence = fenceOf(c)) =>
      h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body: { ...fence, report } })
    return { id, c, put }
  }

  const resultRows = (id: string) =>
    rows<{ kind: string; requirement: string; status: string; reason: string | null }>(
      h.t.db.orm,
      sql`SELECT r.kind, r.requirement, r.status, r.reason FROM requirement_results r
          JOIN preflight_reports p ON p.id = r.report_id WHERE p.dispatch_id = ${id} ORDER BY r.position`,
    )

  it('answers proceed to a met report and keeps its results once: in the report, with its kinds', async () => {
    const { id, put } = await claimed()
    const report = reportFor(definition())
    expect((await put(report)).body).toEqual({ decision: 'proceed', status: 'running' })
    // a met result has no row of its own
    expect(await resultRows(id)).toEqual([])
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.preflight.results).toEqual(report.results)
    expect(
      await rows(
        h.t.db.orm,
        sql`SELECT array_to_json(kinds) AS kinds, judged FROM preflight_reports WHERE dispatch_id = ${id}`,
      ),
    ).toEqual([{ kinds: [...new Set(report.results.map((r) => r.kind))].sort(), judged: null }])
  })

  it('answers abort to an unmet report and fails the dispatch as preflight_failed', async () => {
    const { id, put } = await claimed()
    expect((await put(reportFor(definition(), 'unmet'))).body).toEqual({
      decision: 'abort',
      status: 'preflight_failed',
    })
    const view = (await h.call('GET', `/v1/dispatches/${id}`)).body
    expect(view.preflight).toMatchObject({ outcome: 'unmet', decision: 'abort' })
  })

  it('keeps error apart from unmet', async () => {
    const { id, put } = await claimed()
    await put(reportFor(definition(), 'error'))
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.preflight.outcome).toBe('error')
  })

  it('stores a report with a missing result as unmet with report-incomplete', async () => {
    const { id, put } = await claimed()
    const report = reportFor(definition())
    report.results.pop()
    expect((await put(report)).body.decision).toBe('abort')
    const view = (await h.call('GET', `/v1/dispatches/${id}`)).body
    expect(view.preflight).toMatchObject({ outcome: 'unmet', reason: 'report-incomplete' })
    expect((await resultRows(id)).at(-1)).toEqual({
      kind: 'git',
      requirement: 'worktree',
      status: 'unmet',
      reason: 'report-incomplete',
    })
  })

  it('stores a report with an extra result as unmet with report-incomplete', async () => {
    const { id, put } = await claimed()
    const report = reportFor(definition())
    report.results.push({ kind: 'exec', requirement: 'pnpm', status: 'met', observed: {}, durationMs: 1 })
    expect((await put(report)).body.decision).toBe('abort')
    // the extra one, judged unmet, has a row; the view shows all six as judged
    expect(await resultRows(id)).toEqual([
      { kind: 'exec', requirement: 'pnpm', status: 'unmet', reason: 'report-incomplete' },
    ])
    const results = (await h.call('GET', `/v1/dispatches/${id}`)).body.preflight.results
    expect(results).toHaveLength(6)
    expect(results.at(-1)).toMatchObject({ requirement: 'pnpm', reason: 'report-incomplete' })
  })

  it('stores a report whose results are out of declaration order as report-incomplete', async () => {
    const { put } = await claimed()
    const report = reportFor(definition())
    report.results.reverse()
    expect((await put(report)).body.decision).toBe('abort')
  })

  it('recomputes the outcome instead of trusting a claimed met', async () => {
    const { id, put } = await claimed()
    const report = { ...reportFor(definition(), 'unmet'), outcome: 'met' as const }
    expect((await put(report)).body.decision).toBe('abort')
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.status).toBe('preflight_failed')
  })

  it('answers the same to the same report sent twice', async () => {
    const { put } = await claimed()
    const report = reportFor(definition())
    const first = await put(report)
    const again = await put(report)
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
  })

  it('answers a retried report the first answer, also after the dispatch completed', async () => {
    const { id, c, put } = await claimed()
    const report = reportFor(definition())
    const first = await put(report)
    expect(first.body).toEqual({ decision: 'proceed', status: 'running' })
    const done = await h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), exitCode: 0 },
    })
    expect(done.body.status).toBe('succeeded')
    const again = await put(report)
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
  })

  it('refuses a different second report for the same attempt with 409', async () => {
    const { put } = await claimed()
    await put(reportFor(definition()))
    const r = await put(reportFor(definition(), 'unmet'))
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('report-conflict')
  })

  it('accepts an empty report for a definition that declares nothing', async () => {
    const bare = { name: 'bare', agent: { command: ['x'] } }
    await h.call('POST', '/v1/subagents', { body: bare })
    await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
    const id = await queueDispatch(h, bare)
    const c = await claim(h)
    const r = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fenceOf(c), report: { ...reportFor(bare), declared: false } },
    })
    expect(r.body).toEqual({ decision: 'proceed', status: 'running' })
  })

  describe('completion', () => {
    it('refuses an agent exit before a report answered proceed', async () => {
      const { id, c } = await claimed()
      const r = await h.call('POST', `/v1/dispatches/${id}/complete`, {
        role: 'worker',
        body: { ...fenceOf(c), exitCode: 0 },
      })
      expect(r.status).toBe(409)
      expect(r.body.error.code).toBe('invalid-state')
    })

    it('refuses a setup failure after a report answered proceed', async () => {
      const { id, c, put } = await claimed()
      await put(reportFor(definition()))
      const r = await h.call('POST', `/v1/dispatches/${id}/complete`, {
        role: 'worker',
        body: { ...fenceOf(c), status: 'setup_failed', reason: 'setup-exit' },
      })
      expect(r.status).toBe(409)
      expect(r.body.error.code).toBe('invalid-state')
      expect((await h.call('GET', `/v1/dispatches/${id}`)).body.status).toBe('running')
    })

    it('fails the dispatch as failed on a non-zero exit', async () => {
      const { id, c, put } = await claimed()
      await put(reportFor(definition()))
      const r = await h.call('POST', `/v1/dispatches/${id}/complete`, {
        role: 'worker',
        body: { ...fenceOf(c), exitCode: 3 },
      })
      expect(r.body).toEqual({ id, status: 'failed' })
    })

    it('records a setup failure with its reason and output tail', async () => {
      const { id, c } = await claimed()
      const body = {
        ...fenceOf(c),
        status: 'setup_failed',
        reason: 'path-not-allowed',
        detail: 'no',
        exitCode: 1,
      }
      const r = await h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })
      expect(r.body).toEqual({ id, status: 'setup_failed' })
      const view = (await h.call('GET', `/v1/dispatches/${id}`)).body
      expect(view.completion).toMatchObject({
        status: 'setup_failed',
        reason: 'path-not-allowed',
        detail: 'no',
      })
      expect(view.preflight).toBeUndefined()
    })

    it('answers the same to a repeated completion and 409 to a different one', async () => {
      const { id, c, put } = await claimed()
      await put(reportFor(definition()))
      const body = { ...fenceOf(c), exitCode: 0, durationMs: 5 }
      await h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })
      const again = await h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })
      expect(again.body).toEqual({ id, status: 'succeeded' })
      const other = await h.call('POST', `/v1/dispatches/${id}/complete`, {
        role: 'worker',
        body: { ...body, exitCode: 1 },
      })
      expect(other.status).toBe(409)
      expect(other.body.error.code).toBe('completion-conflict')
    })
  })
})
