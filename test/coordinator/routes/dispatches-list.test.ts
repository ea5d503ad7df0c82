// GET /v1/dispatches: newest first, each filter narrows, each item says why its dispatch ended, bad
// input is a 400 with a stable code.
import { beforeAll, describe, expect, it } from 'vitest'
import { encodeCursor } from '../../../src/coordinator/db/cursor.js'
import { useTestApp } from '../../support/app.js'
import {
  cancelled,
  type Driven,
  exited,
  expired,
  preflightFailed,
  queued,
  running,
  setupFailed,
} from '../../support/dispatch-states.js'
import { definition } from '../../support/fixtures.js'

const web = definition('web')
const api = definition('api')
// longer than the 2,048 characters an item shows, with an end to recognise
const output = `${'x'.repeat(3000)}\nnpm ERR! missing script: build\n`

describe('GET /v1/dispatches', () => {
  // maxAttempts 1: a lapsed lease expires the dispatch at once
  const h = useTestApp({ maxAttempts: 1 })
  type Way = 'setup' | 'unmet' | 'error' | 'failed' | 'succeeded' | 'faulted' | 'lapsed' | 'running'
  const d = {} as Record<Way | 'cancelled' | 'queued', Driven>
  // every dispatch, newest first
  let all: string[] = []

  beforeAll(async () => {
    d.setup = await setupFailed(h, { def: web, workerId: 'w1', detail: output })
    d.unmet = await preflightFailed(h, { def: web, workerId: 'w2' })
    d.error = await preflightFailed(h, { def: api, workerId: 'w1', status: 'error' })
    d.failed = await exited(h, 3, { def: api, workerId: 'w2' })
    d.succeeded = await exited(h, 0, { def: web, workerId: 'w1' })
    d.faulted = await expired(h, { def: api, workerId: 'w3', fault: 'baseline: git write-tree exited 128' })
    d.lapsed = await expired(h, { def: web, workerId: 'w3' })
    d.running = await running(h, { def: web, workerId: 'w2' })
    d.cancelled = await cancelled(h, web)
    d.queued = { id: await queued(h, api), workerId: '' }
    all = Object.values(d)
      .map((x) => x.id)
      .reverse()
  })

  const list = (query = '', role: 'operator' | 'orchestrator' = 'operator') =>
    h.call('GET', `/v1/dispatches${query}`, { role })
  const ids = async (query: string) => {
    const r = await list(query)
    expect(r.status).toBe(200)
    return r.body.items.map((i: { id: string }) => i.id)
  }
  const item = async (id: string) =>
    (await list('?limit=500')).body.items.find((i: { id: string }) => i.id === id)

  it('finds the dispatches whose id starts with a prefix, with or without its dashes', async () => {
    const id = d.failed.id
    expect(await ids(`?idPrefix=${id.slice(0, 8)}`)).toEqual([id])
    expect(await ids(`?idPrefix=${id.slice(0, 13)}`)).toEqual([id])
    expect(await ids(`?idPrefix=${id.slice(0, 13).replace('-', '').toUpperCase()}`)).toEqual([id])
    expect(await ids(`?idPrefix=${id.replaceAll('-', '')}`)).toEqual([id])
    expect(await ids(`?idPrefix=${id.slice(0, 8)}&status=succeeded`)).toEqual([])
    // exactly the ids in the prefix's range, newest first
    for (const prefix of [id.slice(0, 4), '0000', 'ffff'])
      expect(await ids(`?idPrefix=${prefix}`), prefix).toEqual(all.filter((x) => x.startsWith(prefix)))
    for (const bad of ['abc', 'xyz1', 'a'.repeat(33), '--ab']) {
      const r = await list(`?idPrefix=${bad}`)
      expect(r.status, bad).toBe(400)
      expect(r.body.error.code).toBe('invalid-request')
    }
  })

  it('lists every dispatch newest first, to operators and orchestrators', async () => {
    expect(await ids('')).toEqual(all)
    const r = await list('', 'orchestrator')
    expect(r.body.items.map((i: { id: string }) => i.id)).toEqual(all)
    expect(r.body.nextCursor).toBeNull()
  })

  describe('says why a dispatch ended', () => {
    it('setup_failed: the setup reason, its exit code and the tail of its output', async () => {
      const i = await item(d.setup.id)
      expect(i).toMatchObject({
        status: 'setup_failed',
        workerId: 'w1',
        subagent: { name: 'web', version: 1 },
      })
      expect(i.setup).toEqual({ reason: 'setup-exit', exitCode: 1, outputTail: output.slice(-2048) })
      expect(i.exitCode).toBeUndefined()
      expect(i.endedAt).toEqual(expect.any(String))
    })

    it('preflight_failed: each unmet requirement of the report and its reason', async () => {
      const i = await item(d.unmet.id)
      expect(i.preflight).toEqual({
        outcome: 'unmet',
        failedCount: 5,
        failed: [
          { kind: 'paths', requirement: 'package.json', status: 'unmet', reason: 'not-found' },
          { kind: 'paths', requirement: 'src/**/*.ts', status: 'unmet', reason: 'not-found' },
          { kind: 'exec', requirement: 'git', status: 'unmet', reason: 'not-found' },
          { kind: 'exec', requirement: 'node', status: 'unmet', reason: 'not-found' },
          { kind: 'git', requirement: 'worktree', status: 'unmet', reason: 'not-found' },
        ],
      })
    })

    it('preflight_failed: the error results of the report', async () => {
      const i = await item(d.error.id)
      expect(i.preflight.outcome).toBe('error')
      expect(i.preflight.failed[0]).toEqual({
        kind: 'paths',
        requirement: 'package.json',
        status: 'error',
        reason: 'timeout',
      })
    })

    it('expired: the last fault a worker posted', async () => {
      const i = await item(d.faulted.id)
      expect(i.fault).toEqual({
        message: 'baseline: git write-tree exited 128',
        attempt: 1,
        at: expect.stringMatching(/Z$/),
      })
      expect((await item(d.lapsed.id)).fault).toBeUndefined()
    })

    it('failed and succeeded: the agent’s exit code', async () => {
      expect((await item(d.failed.id)).exitCode).toBe(3)
      expect((await item(d.succeeded.id)).exitCode).toBe(0)
    })

    it('a dispatch that has not ended says nothing of an end', async () => {
      const q = await item(d.queued.id)
      expect(q).toMatchObject({ status: 'queued', workerId: null, endedAt: null, attempt: 0, maxAttempts: 1 })
      for (const key of ['setup', 'preflight', 'fault', 'exitCode']) expect(q).not.toHaveProperty(key)
      expect(await item(d.running.id)).toMatchObject({ status: 'running', workerId: 'w2', endedAt: null })
      expect((await item(d.cancelled.id)).endedAt).toEqual(expect.any(String))
    })
  })

  describe('filters', () => {
    it('by one status', async () => {
      expect(await ids('?status=expired')).toEqual([d.lapsed.id, d.faulted.id])
    })

    it('by several statuses, repeated', async () => {
      expect(await ids('?status=failed&status=setup_failed&status=failed')).toEqual([d.failed.id, d.setup.id])
    })

    it('by subagent', async () => {
      expect(await ids('?subagent=api')).toEqual([d.queued.id, d.faulted.id, d.failed.id, d.error.id])
    })

    it('by the worker of the latest claim, also after its lease ended', async () => {
      expect(await ids('?worker=w3')).toEqual([d.lapsed.id, d.faulted.id])
      expect(await ids('?worker=w2&status=running')).toEqual([d.running.id])
    })

    it('by a setup reason', async () => {
      expect(await ids('?reason=setup-exit')).toEqual([d.setup.id])
    })

    it('by the reason of an unmet or error result', async () => {
      expect(await ids('?reason=not-found')).toEqual([d.unmet.id])
      expect(await ids('?reason=timeout')).toEqual([d.error.id])
    })

    it('by fault: expired after a worker posted one', async () => {
      expect(await ids('?reason=fault')).toEqual([d.faulted.id])
    })

    it('by a reason with a subagent, a worker or a status', async () => {
      expect(await ids('?reason=not-found&subagent=web')).toEqual([d.unmet.id])
      expect(await ids('?reason=not-found&subagent=api')).toEqual([])
      expect(await ids('?reason=fault&worker=w3')).toEqual([d.faulted.id])
      expect(await ids('?reason=fault&worker=w1')).toEqual([])
      expect(await ids('?reason=timeout&status=preflight_failed')).toEqual([d.error.id])
      expect(await ids('?reason=timeout&status=failed')).toEqual([])
    })

    it('by since (inclusive) and until (exclusive) on createdAt', async () => {
      const items = (await list()).body.items as { id: string; createdAt: string }[]
      const at = (id: string) => items.find((i) => i.id === id)?.createdAt as string
      // createdAt has milliseconds; the rows were created more than a millisecond apart
      const window = `?since=${at(d.failed.id)}&until=${at(d.lapsed.id)}`
      expect(await ids(window)).toEqual([d.faulted.id, d.succeeded.id, d.failed.id])
      expect(await ids(`${window}&status=expired`)).toEqual([d.faulted.id])
      expect(await ids(`${window}&reason=fault`)).toEqual([d.faulted.id])
    })
  })

  describe('bad input is a 400 with a stable code', () => {
    const bad = [
      ['an unknown status', '?status=done', 'invalid-request'],
      ['an unknown status among good ones', '?status=failed&status=done', 'invalid-request'],
      ['a limit of 0', '?limit=0', 'invalid-request'],
      ['a limit over 500', '?limit=501', 'invalid-request'],
      ['a limit that is no number', '?limit=ten', 'invalid-request'],
      ['a since that is not ISO', '?since=yesterday', 'invalid-request'],
      [
        'a since after the until',
        '?since=2026-02-02T00:00:00Z&until=2026-02-01T00:00:00Z',
        'invalid-request',
      ],
      ['a reason that is no code', '?reason=Not%20Found', 'invalid-request'],
      ['two subagents', '?subagent=a&subagent=b', 'invalid-request'],
      ['an unknown parameter', '?colour=red', 'invalid-request'],
      ['a cursor that is not base64url', '?cursor=%25%25', 'invalid-cursor'],
      [
        'a cursor of another endpoint',
        `?cursor=${encodeCursor(['2026-01-01T00:00:00.000000Z', 7])}`,
        'invalid-cursor',
      ],
      [
        'a cursor with an impossible date',
        `?cursor=${encodeCursor(['2026-02-30T00:00:00.000000Z', '00000000-0000-4000-8000-000000000000'])}`,
        'invalid-cursor',
      ],
      [
        'a cursor of the endings',
        `?cursor=${encodeCursor(['2026-01-01T00:00:00.000000Z', '00000000-0000-4000-8000-000000000000', 'ended'])}`,
        'invalid-cursor',
      ],
    ] as const
    it.each(bad)('refuses %s', async (_what, query, code) => {
      const r = await list(query)
      expect(r.status).toBe(400)
      expect(r.body.error.code).toBe(code)
    })
  })

  it('takes a since equal to the until (an empty window)', async () => {
    expect(await ids('?since=2026-02-01T00:00:00Z&until=2026-02-01T00:00:00Z')).toEqual([])
  })

  it('is described in /openapi.json with its query parameters', async () => {
    const doc = (await h.call('GET', '/openapi.json', { role: null })).body
    const params = doc.paths['/v1/dispatches'].get.parameters.map((p: { name: string }) => p.name)
    expect(params).toEqual(
      expect.arrayContaining(['status', 'subagent', 'worker', 'reason', 'since', 'until', 'limit', 'cursor']),
    )
  })
})
