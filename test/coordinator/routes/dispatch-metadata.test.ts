// Priority and metadata at creation: bounded (400 with a stable code beyond the bounds), kept with the
// idempotency key's request, returned wherever the dispatch is, and metadata filterable in the listing.
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'
import { claim, definition, queueDispatch, workspace } from '../../support/fixtures.js'

const create = (h: ReturnType<typeof useTestApp>, extra: Record<string, unknown>) =>
  h.call('POST', '/v1/dispatches', {
    role: 'orchestrator',
    body: { subagent: definition().name, workspace, ...extra },
  })

const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, `v${i}`]))

describe('metadata and priority at creation', () => {
  const h = useTestApp()

  it('returns them in GET one, in the listing and in the claim', async () => {
    const metadata = { task: 'T-42', pr: 'org/app#7', 'team.name': 'web' }
    const id = await queueDispatch(h, definition(), { metadata, priority: 5 })
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body).toMatchObject({ priority: 5, metadata })
    const item = (await h.call('GET', '/v1/dispatches?limit=1')).body.items[0]
    expect(item).toMatchObject({ id, priority: 5, metadata })
    const c = await claim(h)
    expect(c.dispatch).toMatchObject({ id, priority: 5, metadata })
  })

  it('defaults priority to 0 and leaves metadata out when none was given', async () => {
    const id = await queueDispatch(h)
    const view = (await h.call('GET', `/v1/dispatches/${id}`)).body
    expect(view.priority).toBe(0)
    expect(view).not.toHaveProperty('metadata')
  })

  it('takes metadata up to its bounds', async () => {
    const value = 'é'.repeat(128) // 256 bytes
    expect((await create(h, { metadata: { ...sixteen, k0: value } })).status).toBe(201)
    expect((await create(h, { metadata: { ['a'.repeat(64)]: '' } })).status).toBe(201)
    expect((await create(h, { priority: -100 })).status).toBe(201)
    expect((await create(h, { priority: 100 })).status).toBe(201)
  })

  it.each([
    ['17 keys', { ...sixteen, k16: 'x' }],
    ['a value over 256 bytes', { k: `${'é'.repeat(128)}x` }],
    ['a key over 64 characters', { ['a'.repeat(65)]: 'x' }],
    ['a key with a space', { 'task id': 'x' }],
    ['a key starting with a dot', { '.task': 'x' }],
    ['an empty key', { '': 'x' }],
    ['a number value', { task: 42 }],
    ['a nested value', { task: { id: 'x' } }],
    ['a NUL in a value', { task: 'a\u0000b' }],
    ['not a map', ['task']],
  ])('refuses metadata with %s: 400 invalid-metadata', async (_what, metadata) => {
    const r = await create(h, { metadata })
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid-metadata')
    expect(r.body.error.details.issues[0].path[0]).toBe('metadata')
  })

  it.each([[101], [-101], [1.5], ['1']])('refuses priority %s: 400 invalid-request', async (priority) => {
    const r = await create(h, { priority })
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid-request')
  })

  it('counts priority and metadata in the idempotency key’s request', async () => {
    const body = { idempotencyKey: 'steer-1', priority: 3, metadata: { task: 'T-1' } }
    const first = await create(h, body)
    expect(first.status).toBe(201)
    expect((await create(h, { ...body, metadata: { task: 'T-1' } })).status).toBe(200)
    for (const other of [{ priority: 4 }, { metadata: { task: 'T-2' } }, { metadata: undefined }]) {
      const r = await create(h, { ...body, ...other })
      expect(r.status).toBe(409)
      expect(r.body.error.code).toBe('idempotency-conflict')
    }
  })
})

describe('GET /v1/dispatches?metadata.key=value', () => {
  const h = useTestApp()
  const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((i) => i.id)

  it('lists the dispatches holding every pair asked for, newest first, with the other filters', async () => {
    const a = await queueDispatch(h, definition(), { metadata: { task: 'T-1', team: 'web' } })
    const b = await queueDispatch(h, definition('api'), { metadata: { task: 'T-2', team: 'web' } })
    const c = await queueDispatch(h, definition(), { metadata: { task: 'T-1', team: 'api' } })
    await queueDispatch(h, definition())
    expect(ids(await h.call('GET', '/v1/dispatches?metadata.task=T-1'))).toEqual([c, a])
    expect(ids(await h.call('GET', '/v1/dispatches?metadata.task=T-1&metadata.team=web'))).toEqual([a])
    expect(ids(await h.call('GET', '/v1/dispatches?metadata.team=web&subagent=api'))).toEqual([b])
    expect(ids(await h.call('GET', '/v1/dispatches?metadata.team=web&status=succeeded'))).toEqual([])
    expect(ids(await h.call('GET', '/v1/dispatches?metadata.task=T-9'))).toEqual([])
    // a page at a time
    const first = await h.call('GET', '/v1/dispatches?metadata.team=web&limit=1')
    expect(ids(first)).toEqual([b])
    const cursor = encodeURIComponent(first.body.nextCursor)
    expect(ids(await h.call('GET', `/v1/dispatches?metadata.team=web&limit=1&cursor=${cursor}`))).toEqual([a])
  })

  it.each([
    ['a key it cannot hold', '?metadata.task%20id=x', 'a metadata key is'],
    ['a key given twice', '?metadata.task=a&metadata.task=b', 'given more than once'],
    ['a value over 256 bytes', `?metadata.task=${'x'.repeat(257)}`, 'at most 256 bytes'],
    ['17 pairs', `?${Array.from({ length: 17 }, (_, i) => `metadata.k${i}=v`).join('&')}`, 'at most 16'],
  ])('refuses a metadata filter with %s: 400 invalid-metadata', async (_what, query, says) => {
    const r = await h.call('GET', `/v1/dispatches${query}`)
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid-metadata')
    expect(r.body.error.message).toContain(says)
  })

  it('still refuses an unknown parameter: 400 invalid-request', async () => {
    const r = await h.call('GET', '/v1/dispatches?metadatatask=x')
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid-request')
  })

  it('shows the new fields and the long-poll in /openapi.json', async () => {
    const doc = (await h.call('GET', '/openapi.json', { role: null })).body
    const create = doc.paths['/v1/dispatches'].post.requestBody.content['application/json'].schema
    const props = create.properties ?? doc.components?.schemas?.[create.$ref?.split('/').at(-1)]?.properties
    expect(Object.keys(props)).toEqual(expect.arrayContaining(['priority', 'metadata']))
    const get = doc.paths['/v1/dispatches/{id}'].get
    expect(get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['waitFor', 'timeoutMs']),
    )
    expect(doc.paths['/v1/dispatches/{id}/events'].get.responses['200'].content).toHaveProperty(
      'text/event-stream',
    )
  })
})
