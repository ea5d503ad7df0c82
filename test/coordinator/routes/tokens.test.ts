// GET /v1/tokens, POST /v1/tokens and DELETE /v1/tokens/{id}: an admin lists tokens (never a secret),
// mints one (its secret in that answer only) and revokes one, which stops working at once; expired tokens
// do not work either.
import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { createToken, hashToken } from '../../../src/coordinator/http/auth.js'
import { tokens, useTestApp } from '../../support/app.js'

describe('tokens', () => {
  const h = useTestApp()

  // A request with a raw bearer token; answers the status.
  const use = async (token: string) =>
    (
      await h.app.request('/v1/subagents/nobody', {
        headers: { authorization: `Bearer ${token}` },
      })
    ).status

  const listAll = async () => (await h.call('GET', '/v1/tokens?limit=500')).body.items

  it('lists every token with role, state and dates, never a secret or its hash', async () => {
    const made = await createToken(h.t.db.orm, 'worker', { label: 'ci-runner' })
    const r = await h.call('GET', '/v1/tokens?limit=500')
    expect(r.status).toBe(200)
    expect(r.body.items).toContainEqual({
      id: made.id,
      role: 'worker',
      label: 'ci-runner',
      bootstrap: false,
      state: 'active',
      createdAt: expect.any(String),
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
    })
    expect(r.body.items.filter((t: { bootstrap: boolean }) => t.bootstrap)).toHaveLength(4)
    const text = JSON.stringify(r.body)
    for (const secret of [made.token, ...Object.values(tokens)]) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(hashToken(secret))
    }
  })

  it('mints a token: 201 with its secret once, which works for its role; the list never shows it', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const r = await h.call('POST', '/v1/tokens', { body: { role: 'operator', label: 'laptop', expiresAt } })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.any(Number),
      role: 'operator',
      label: 'laptop',
      bootstrap: false,
      state: 'active',
      createdAt: expect.any(String),
      lastUsedAt: null,
      expiresAt: new Date(expiresAt).toISOString(),
      revokedAt: null,
      token: expect.stringMatching(/^pft_/),
    })
    // an operator's token: read routes answer, an admin's do not
    expect(await use(r.body.token)).toBe(404)
    const asIt = await h.app.request('/v1/tokens', { headers: { authorization: `Bearer ${r.body.token}` } })
    expect(asIt.status).toBe(403)
    const listed = await listAll()
    expect(listed.find((t: { id: number }) => t.id === r.body.id)).toMatchObject({ label: 'laptop' })
    expect(JSON.stringify(listed)).not.toContain(r.body.token)
  })

  it('mints only for an admin, and refuses a bad role, a past expiry or an unknown field with 400', async () => {
    for (const role of ['operator', 'orchestrator', 'worker'] as const) {
      const r = await h.call('POST', '/v1/tokens', { role, body: { role: 'admin' } })
      expect(r.status, role).toBe(403)
    }
    const past = new Date(Date.now() - 1_000).toISOString()
    for (const body of [
      { role: 'root' },
      {},
      { role: 'worker', expiresAt: past },
      { role: 'worker', expiresAt: 'tomorrow' },
      { role: 'worker', label: '' },
      { role: 'worker', secret: 'mine' },
    ]) {
      const r = await h.call('POST', '/v1/tokens', { body })
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.code).toBe('invalid-request')
    }
  })

  it('notes when a token was last used', async () => {
    const made = await createToken(h.t.db.orm, 'operator')
    expect(await use(made.token)).toBe(404)
    const listed = (await listAll()).find((t: { id: number }) => t.id === made.id)
    expect(Date.parse(listed.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000)
  })

  it('revokes a token: its next request is 401 at once, and revoking again answers the same', async () => {
    const made = await createToken(h.t.db.orm, 'operator', { label: 'leaked' })
    // Used once, so this coordinator has it resolved in its cache.
    expect(await use(made.token)).toBe(404)
    const r = await h.call('DELETE', `/v1/tokens/${made.id}`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: made.id, state: 'revoked', revokedAt: expect.any(String) })
    expect(await use(made.token)).toBe(401)
    const again = await h.call('DELETE', `/v1/tokens/${made.id}`)
    expect(again).toMatchObject({ status: 200, body: r.body })
  })

  it('refuses an expired token with 401 and lists it as expired', async () => {
    const made = await createToken(h.t.db.orm, 'operator', { expiresAt: new Date(Date.now() + 3_600_000) })
    // Its hour has passed (the clock moved on in the database, not in this test).
    await h.t.db.orm.execute(
      sql`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = ${made.id}`,
    )
    expect(await use(made.token)).toBe(401)
    const listed = (await listAll()).find((t: { id: number }) => t.id === made.id)
    expect(listed.state).toBe('expired')
  })

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    expect((await h.call('DELETE', '/v1/tokens/987654')).body.error.code).toBe('not-found')
    for (const id of ['0', 'abc', '-1', '1.5', '9'.repeat(20)]) {
      const r = await h.call('DELETE', `/v1/tokens/${id}`)
      expect(r.status, id).toBe(400)
      expect(r.body.error.code).toBe('invalid-request')
    }
  })

  it('pages with a cursor, and refuses a cursor it did not issue with 400 invalid-cursor', async () => {
    const first = await h.call('GET', '/v1/tokens?limit=2')
    expect(first.body.items).toHaveLength(2)
    const second = await h.call('GET', `/v1/tokens?limit=2&cursor=${first.body.nextCursor}`)
    expect(second.body.items[0].id).toBeGreaterThan(first.body.items[1].id)
    const bad = await h.call('GET', '/v1/tokens?cursor=WyJ4Il0')
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('invalid-cursor')
    expect((await h.call('GET', '/v1/tokens?limit=501')).status).toBe(400)
  })
})
