// Long-polling claims: nothing is claimed for a worker that has gone. (Wake-ups across coordinators:
// test/coordinator/server.test.ts.)
import { sql } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { tokens, useTestApp } from '../../support/app.js'
import { definition, workspace } from '../../support/fixtures.js'
import { waitFor } from '../../support/wait.js'

describe('a claim whose worker has gone', () => {
  // Polling slower than the test: a waiting claim looks again only when woken (here: by the abort).
  const h = useTestApp({ claimPollMs: 60_000 })
  beforeAll(async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
  })

  // Queued behind the coordinator's back: no wake-up, as when another coordinator's NOTIFY is late.
  async function queueQuietly(): Promise<string> {
    const id = crypto.randomUUID()
    await h.t.db.orm.execute(
      sql`INSERT INTO dispatches (id, subagent_name, subagent_version, workspace)
          VALUES (${id}, 'frontend-fixer', 1, ${JSON.stringify(workspace)}::jsonb)`,
    )
    return id
  }

  const claimWith = (signal: AbortSignal, waitMs: number) =>
    h.app.request('/v1/worker/claim', {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.worker}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workerId: 'gone', waitMs }),
      signal,
    })

  const dispatch = async (id: string) => (await h.call('GET', `/v1/dispatches/${id}`)).body

  it('leaves a dispatch queued when the long-poll was aborted while waiting', async () => {
    await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
    const ac = new AbortController()
    const waiting = claimWith(ac.signal, 20_000)
    await waitFor(() => h.waker.waiting === 1, { what: 'the claim to be parked' })
    const id = await queueQuietly()
    ac.abort()
    expect((await waiting).status).toBe(204)
    expect(await dispatch(id)).toMatchObject({ status: 'queued', attempt: 0 })
  })

  it('claims nothing for a request aborted before its first claim', async () => {
    await h.t.db.orm.execute(sql`UPDATE dispatches SET status = 'cancelled' WHERE status = 'queued'`)
    const id = await queueQuietly()
    expect((await claimWith(AbortSignal.abort(), 0)).status).toBe(204)
    expect(await dispatch(id)).toMatchObject({ status: 'queued', attempt: 0 })
  })
})
