import { describe, expect, it } from 'vitest'
import { type Reply, useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch } from '../../support/fixtures.js'
import { withBody } from '../../support/routes.js'

// Bad input never reaches a 500: always a 4xx with the error envelope.
describe('bad input', () => {
  const h = useTestApp()

  const expectEnvelope = (r: Reply, status: number, code: string) => {
    expect(r.status).toBe(status)
    expect(r.body).toEqual({
      error: {
        code,
        message: expect.any(String),
        ...(r.body.error.details ? { details: expect.anything() } : {}),
      },
    })
  }

  const label = (r: { method: string; path: string }) =>
    `${r.method} ${r.path.replace(/[0-9a-f-]{36}/, '{id}')}`

  it.each(withBody.map((r) => [label(r), r] as const))('refuses wrong types on %s', async (_l, r) => {
    const [key] = Object.keys(r.body)
    const reply = await h.call(r.method, r.path, { body: { ...r.body, [key as string]: [{ wrong: true }] } })
    expectEnvelope(reply, 400, 'invalid-request')
    expect(reply.body.error.details.issues.length).toBeGreaterThan(0)
  })

  it.each(withBody.map((r) => [label(r), r] as const))('refuses unknown keys on %s', async (_l, r) => {
    expectEnvelope(await h.call(r.method, r.path, { body: { ...r.body, bogus: 1 } }), 400, 'invalid-request')
  })

  it.each(withBody.map((r) => [label(r), r] as const))('refuses malformed JSON on %s', async (_l, r) => {
    expectEnvelope(await h.call(r.method, r.path, { raw: '{"a":' }), 400, 'malformed-json')
  })

  it.each(withBody.map((r) => [label(r), r] as const))('refuses a body over 1 MiB on %s', async (_l, r) => {
    const raw = JSON.stringify({ ...r.body, padding: 'x'.repeat(1024 * 1024) })
    expectEnvelope(await h.call(r.method, r.path, { raw }), 413, 'payload-too-large')
  })

  it.each(withBody.map((r) => [label(r), r] as const))('refuses an empty JSON body on %s', async (_l, r) => {
    expectEnvelope(await h.call(r.method, r.path, { raw: '' }), 400, 'malformed-json')
  })

  it('refuses a body that is not sent as JSON', async () => {
    const res = await h.app.request('/v1/worker/claim', {
      method: 'POST',
      headers: { authorization: 'Bearer test-admin-token-0123456789abcdefg', 'content-type': 'text/plain' },
      body: '{"workerId":"w"}',
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid-request')
  })

  it('refuses a dispatch id that is not a uuid', async () => {
    expectEnvelope(await h.call('GET', '/v1/dispatches/42'), 400, 'invalid-request')
    expectEnvelope(
      await h.call('POST', '/v1/dispatches/42/heartbeat', { body: { attempt: 1, leaseToken: 't' } }),
      400,
      'invalid-request',
    )
  })

  it('refuses a version that is not a whole number and unknown query keys', async () => {
    expectEnvelope(await h.call('GET', '/v1/subagents/x?version=abc'), 400, 'invalid-request')
    expectEnvelope(await h.call('GET', '/v1/subagents/x?version=0'), 400, 'invalid-request')
    expectEnvelope(await h.call('GET', '/v1/subagents/x?bogus=1'), 400, 'invalid-request')
  })

  it.each([
    '/etc/passwd',
    'src//index.ts',
    'src/./index.ts',
    // what picomatch would read as a negation, behind "./" or not
    './!x',
    '././!x',
    'a/../!x',
    // a lone surrogate, which only a name that is not UTF-8 is read with; 513 characters of one emoji each
    'a\udcff',
    '😀'.repeat(513),
  ])('refuses a subagent definition with the path pattern %j', async (pattern) => {
    const body = { ...definition('bad'), contextRequires: { paths: [pattern] } }
    const r = await h.call('POST', '/v1/subagents', { body })
    expectEnvelope(r, 400, 'invalid-request')
    expect(r.body.error.message).toContain('contextRequires.paths.0:')
  })

  it('refuses a NUL the database cannot store (in a key) with 400, not 500', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    const body = { ...fenceOf(c), step: 'setup', detail: { 'a\u0000b': 'x' } }
    const r = await h.call('POST', `/v1/dispatches/${id}/events`, { role: 'worker', body })
    expectEnvelope(r, 400, 'invalid-value')
  })

  // 100,000 levels fit under the body limit and JSON.parse takes them; any recursion over them would overflow.
  const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`

  it('refuses deeply nested JSON in an event detail with 400, not 500', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    const raw = `${JSON.stringify({ ...fenceOf(c), step: 'setup' }).slice(0, -1)},"detail":${deep(100_000)}}`
    expectEnvelope(
      await h.call('POST', `/v1/dispatches/${id}/events`, { role: 'worker', raw }),
      400,
      'invalid-request',
    )
  })

  it('refuses deeply nested JSON in a result observed with 400 and stores nothing', async () => {
    const id = await queueDispatch(h, { ...definition('deep-observed'), contextRequires: { exec: ['git'] } })
    const c = await claim(h)
    const now = new Date().toISOString()
    const result = {
      kind: 'exec',
      requirement: 'git',
      status: 'met',
      durationMs: 1,
      observed: { name: 'git' },
    }
    const report = { outcome: 'met', declared: true, results: [result], startedAt: now, finishedAt: now }
    const raw = JSON.stringify({ ...fenceOf(c), report }).replace('{"name":"git"}', deep(100_000))
    const r = await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', raw })
    expectEnvelope(r, 400, 'invalid-request')
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.preflight).toBeUndefined()
  })

  it('keeps a setup failure whose output tail holds NUL bytes, as U+FFFD', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    const failure = { status: 'setup_failed', reason: 'setup-failed', detail: 'bin\u0000ary' }
    const ev = await h.call('POST', `/v1/dispatches/${id}/events`, {
      role: 'worker',
      body: { ...fenceOf(c), step: 'setup-failed', detail: { detail: failure.detail } },
    })
    expect(ev.status).toBe(201)
    const done = await h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), ...failure },
    })
    expect(done.body.status).toBe('setup_failed')
    const again = await h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fenceOf(c), ...failure },
    })
    expect(again.status).toBe(200)
    const view = (await h.call('GET', `/v1/dispatches/${id}`)).body
    expect(view.completion.detail).toBe('bin\ufffdary')
  })

  it('refuses a setup failure without a reason and an exit without exitCode', async () => {
    const base = { attempt: 1, leaseToken: 't' }
    const path = '/v1/dispatches/00000000-0000-4000-8000-000000000000/complete'
    expectEnvelope(
      await h.call('POST', path, { body: { ...base, status: 'setup_failed' } }),
      400,
      'invalid-request',
    )
    expectEnvelope(await h.call('POST', path, { body: base }), 400, 'invalid-request')
    expectEnvelope(
      await h.call('POST', path, { body: { ...base, exitCode: 0, reason: 'x' } }),
      400,
      'invalid-request',
    )
  })

  it('never sends a stack trace', async () => {
    const r = await h.call('POST', '/v1/subagents', { raw: '{"name": [' })
    expect(JSON.stringify(r.body)).not.toMatch(/at .*\.(ts|js):\d+/)
  })
})
