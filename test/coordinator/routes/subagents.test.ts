import { describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'
import { definition } from '../../support/fixtures.js'

// sha256 of {"agent":{"command":["claude","-p","fix"]},"name":"pinned"}: a definition without
// contextRequires hashes exactly as it did before contextRequires existed.
const PINNED_HASH = '72ae9f2ebefb1e21db37232650e66e9a7bf5e3c64270c3db38cdc9b1573e5f92'

describe('subagent registration', () => {
  const h = useTestApp()

  it('stores a new definition as version 1 with 201', async () => {
    const r = await h.call('POST', '/v1/subagents', { body: definition('first') })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'first', version: 1 })
    expect(r.body.hash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('answers 200 with the existing version when the definition is unchanged', async () => {
    const first = await h.call('POST', '/v1/subagents', { body: definition('same') })
    const again = await h.call('POST', '/v1/subagents', { body: definition('same') })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
  })

  it('treats an empty contextRequires as absent', async () => {
    const bare = { name: 'bare', agent: { command: ['x'] } }
    const first = await h.call('POST', '/v1/subagents', { body: bare })
    const again = await h.call('POST', '/v1/subagents', { body: { ...bare, contextRequires: {} } })
    expect(again.status).toBe(200)
    expect(again.body.hash).toBe(first.body.hash)
  })

  it('pins the hash of a definition without contextRequires', async () => {
    const r = await h.call('POST', '/v1/subagents', {
      body: { name: 'pinned', agent: { command: ['claude', '-p', 'fix'] } },
    })
    expect(r.body.hash).toBe(PINNED_HASH)
  })

  it('increments the version on a change and keeps every version', async () => {
    await h.call('POST', '/v1/subagents', { body: definition('evolving') })
    const changed = { ...definition('evolving'), description: 'changed' }
    const r = await h.call('POST', '/v1/subagents', { body: changed })
    expect(r.status).toBe(201)
    expect(r.body.version).toBe(2)
    const v1 = await h.call('GET', '/v1/subagents/evolving?version=1', { role: 'operator' })
    expect(v1.body.definition).toEqual(definition('evolving'))
    const latest = await h.call('GET', '/v1/subagents/evolving', { role: 'operator' })
    expect(latest.body).toMatchObject({ version: 2, definition: changed })
  })

  it('stores one version under concurrent identical registrations', async () => {
    for (const round of [1, 2, 3, 4]) {
      const replies = await Promise.all(
        Array.from({ length: 10 }, () =>
          h.call('POST', '/v1/subagents', { body: definition(`racy-${round}`) }),
        ),
      )
      expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201])
      expect(new Set(replies.map((r) => r.body.version))).toEqual(new Set([1]))
    }
  })

  it('answers 404 for an unknown name or version', async () => {
    expect((await h.call('GET', '/v1/subagents/nobody')).status).toBe(404)
    await h.call('POST', '/v1/subagents', { body: definition('one') })
    const r = await h.call('GET', '/v1/subagents/one?version=7')
    expect(r.status).toBe(404)
    expect(r.body.error.code).toBe('not-found')
  })
})
