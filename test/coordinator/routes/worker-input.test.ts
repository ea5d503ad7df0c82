// What a worker may not write: the coordinator's own event steps, unbounded result fields, an
// attempt past the database's integer. Each is a 400 envelope naming the field, and nothing is stored.
import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import {
  type CheckResult,
  COORDINATOR_STEPS,
  type PreflightReport,
  type SubagentDefinition,
} from '../../../src/contract/index.js'
import { rows } from '../../../src/coordinator/db/client.js'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'

describe('worker input the coordinator refuses', () => {
  const h = useTestApp()

  // A fresh dispatch claimed by a worker (other queued ones cancelled, so the claim takes this one).
  async function claimed(def: SubagentDefinition = definition()) {
    await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
    const id = await queueDispatch(h, def)
    const c = await claim(h)
    expect(c.dispatch.id).toBe(id)
    return { id, c, fence: fenceOf(c) }
  }

  const stepsOf = async (id: string) =>
    (await h.call('GET', `/v1/dispatches/${id}`)).body.events.map((e: { step: string }) => e.step)

  describe('event steps', () => {
    it.each(COORDINATOR_STEPS)('refuses step "%s" from a worker and stores nothing', async (step) => {
      const { id, fence } = await claimed()
      const before = await stepsOf(id)
      const r = await h.call('POST', `/v1/dispatches/${id}/events`, {
        role: 'worker',
        body: { ...fence, step, detail: { status: 'succeeded' } },
      })
      expect(r.status).toBe(400)
      expect(r.body.error.code).toBe('invalid-request')
      expect(r.body.error.message).toBe(`invalid json: step: step "${step}" is written by the coordinator`)
      expect(await stepsOf(id)).toEqual(before)
    })

    it('still takes a worker step', async () => {
      const { id, fence } = await claimed()
      const r = await h.call('POST', `/v1/dispatches/${id}/events`, {
        role: 'worker',
        body: { ...fence, step: 'prepare' },
      })
      expect(r.status).toBe(201)
      expect(await stepsOf(id)).toEqual(['created', 'claimed', 'prepare'])
    })
  })

  describe('result fields', () => {
    const reportsOf = (id: string) =>
      rows<{ n: number }>(
        h.t.db.orm,
        sql`SELECT count(*)::int AS n FROM preflight_reports WHERE dispatch_id = ${id}`,
      )

    // The fixture's report with the first result changed.
    const withFirst = (change: Partial<CheckResult>): PreflightReport => {
      const report = reportFor(definition(), 'unmet')
      const [first, ...rest] = report.results
      return { ...report, results: [{ ...(first as CheckResult), ...change }, ...rest] }
    }

    it.each([
      ['a requirement over 512 characters', { requirement: 'a'.repeat(513) }, 'report.results.0.requirement'],
      ['a reason that is not a code', { reason: 'Not Found' }, 'report.results.0.reason'],
      ['a reason over 64 characters', { reason: 'x'.repeat(100) }, 'report.results.0.reason'],
    ])('refuses %s with 400 and stores nothing', async (_what, change, field) => {
      const { id, fence } = await claimed()
      const r = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
        role: 'worker',
        body: { ...fence, report: withFirst(change) },
      })
      expect(r.status).toBe(400)
      expect(r.body.error.code).toBe('invalid-request')
      expect(r.body.error.message).toContain(`${field}:`)
      expect(await reportsOf(id)).toEqual([{ n: 0 }])
      expect((await h.call('GET', `/v1/dispatches/${id}`)).body.status).toBe('claimed')
    })

    // The longest pattern a definition can declare, in characters that take 3 bytes each in UTF-8 and
    // do not repeat (nothing for the index to compress), or 4-byte emoji (one character each, as the
    // worker counts them too): stored, judged, listed.
    it.each([
      [
        '3-byte characters',
        Array.from({ length: 512 }, (_, i) => String.fromCodePoint(0x4e00 + i * 7)).join(''),
      ],
      ['4-byte emoji', Array.from({ length: 512 }, (_, i) => String.fromCodePoint(0x1f300 + i)).join('')],
    ])('takes a 512-character requirement of %s end to end', async (what, pattern) => {
      expect([...pattern]).toHaveLength(512)
      const name = `long-${what.split(' ')[0]}`
      const def = { name, agent: { command: ['x'] }, contextRequires: { paths: [pattern] } }
      expect((await h.call('POST', '/v1/subagents', { body: def })).status).toBe(201)
      const { id, fence } = await claimed(def)
      const put = await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
        role: 'worker',
        body: { ...fence, report: reportFor(def) },
      })
      expect(put.status).toBe(200)
      expect(put.body).toEqual({ decision: 'proceed', status: 'running' })
      const listed = await h.call('GET', `/v1/reports?subagent=${name}`, { role: 'operator' })
      expect(listed.status).toBe(200)
      expect(listed.body.items).toHaveLength(1)
      expect(listed.body.items[0].results).toEqual([
        expect.objectContaining({ kind: 'paths', requirement: pattern, status: 'met' }),
      ])
    })
  })

  describe('the fence attempt', () => {
    const tooBig = 2 ** 31

    it.each([
      ['POST', 'heartbeat', {}],
      ['PUT', 'preflight', { report: reportFor(definition()) }],
      ['POST', 'events', { step: 'setup' }],
      ['POST', 'complete', { exitCode: 0 }],
    ] as const)('refuses an attempt past int32 on %s %s with 400 naming it', async (method, route, rest) => {
      const { id, c } = await claimed()
      const r = await h.call(method, `/v1/dispatches/${id}/${route}`, {
        role: 'worker',
        body: { attempt: tooBig, leaseToken: c.lease.token, ...rest },
      })
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({
        code: 'invalid-request',
        message: 'invalid json: attempt: attempt is at most 2147483647',
      })
      expect((await h.call('GET', `/v1/dispatches/${id}`)).body).toMatchObject({
        status: 'claimed',
        attempt: 1,
      })
    })
  })
})
