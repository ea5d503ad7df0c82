// /v1/webhooks: admin only; the secret is answered once; bad input is a 400 with a stable code.
import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { MAX_WEBHOOKS } from '../../../src/contract/index.js'
import { useTestApp } from '../../support/app.js'

const h = useTestApp()
const hook = { url: 'https://alerts.example.invalid/preflight', events: ['dispatch.failed'] }

describe('/v1/webhooks', () => {
  it('registers a webhook, answers a generated secret once, and lists it without', async () => {
    const made = await h.call('POST', '/v1/webhooks', { body: hook })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({
      id: expect.any(Number),
      ...hook,
      secret: expect.stringMatching(/^whsec_.{43}$/),
    })
    const list = await h.call('GET', '/v1/webhooks')
    const listed = list.body.items.find((w: { id: number }) => w.id === made.body.id)
    expect(listed).toEqual({ id: made.body.id, ...hook, createdAt: expect.any(String) })
    expect(JSON.stringify(list.body)).not.toContain(made.body.secret)
  })

  it('keeps a secret it was given', async () => {
    const secret = 'given-secret-0123456789abcdef'
    const made = await h.call('POST', '/v1/webhooks', { body: { ...hook, secret } })
    expect(made.body.secret).toBe(secret)
  })

  it.each(['orchestrator', 'operator', 'worker'] as const)('refuses the %s role', async (role) => {
    expect((await h.call('POST', '/v1/webhooks', { role, body: hook })).status).toBe(403)
    expect((await h.call('GET', '/v1/webhooks', { role })).status).toBe(403)
  })

  it.each([
    ['a URL that is not http', { ...hook, url: 'ftp://alerts.example.invalid/x' }],
    ['no URL', { events: hook.events }],
    ['a path for a URL', { ...hook, url: '/hook' }],
    ['an unknown event', { ...hook, events: ['dispatch.succeeded'] }],
    ['no events', { ...hook, events: [] }],
    ['a short secret', { ...hook, secret: 'short' }],
    ['an unknown field', { ...hook, retries: 3 }],
  ])('refuses %s with 400', async (_what, body) => {
    const r = await h.call('POST', '/v1/webhooks', { body })
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid-request')
  })

  it('deletes a webhook, and answers 404 for one that is not there', async () => {
    const made = await h.call('POST', '/v1/webhooks', { body: hook })
    expect((await h.call('DELETE', `/v1/webhooks/${made.body.id}`)).status).toBe(204)
    expect((await h.call('DELETE', `/v1/webhooks/${made.body.id}`)).status).toBe(404)
    expect((await h.call('GET', `/v1/webhooks/${made.body.id}/deliveries`)).status).toBe(404)
    expect((await h.call('DELETE', '/v1/webhooks/abc')).status).toBe(400)
  })

  it('pages through the delivery log, newest first', async () => {
    const made = await h.call('POST', '/v1/webhooks', { body: hook })
    await h.t.db.orm.execute(
      sql`INSERT INTO webhook_deliveries (webhook_id, event, payload)
          SELECT ${made.body.id}, 'dispatch.failed', '{}'::jsonb FROM generate_series(1, 5)`,
    )
    const seen: number[] = []
    let cursor: string | null = null
    do {
      const page = await h.call(
        'GET',
        `/v1/webhooks/${made.body.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      )
      expect(page.status).toBe(200)
      seen.push(...page.body.items.map((d: { id: number }) => d.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(seen).toHaveLength(5)
    expect([...seen].sort((a, b) => b - a)).toEqual(seen)
    const bad = await h.call('GET', `/v1/webhooks/${made.body.id}/deliveries?cursor=nonsense`)
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('invalid-cursor')
  })

  it(`refuses a webhook past ${MAX_WEBHOOKS} with 409 too-many-webhooks`, async () => {
    await h.t.db.orm.execute(
      sql`INSERT INTO webhooks (url, events, secret)
          SELECT 'https://x.example.invalid/', '{dispatch.failed}', 'secret-0123456789abcdef'
          FROM generate_series(1, ${MAX_WEBHOOKS})`,
    )
    const r = await h.call('POST', '/v1/webhooks', { body: hook })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('too-many-webhooks')
  })
})
