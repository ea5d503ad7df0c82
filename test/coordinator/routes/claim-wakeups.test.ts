// Long-polling claims: nothing is claimed for a worker that has gone; a wake-up that came while the claim
// looked is not lost. (Wake-ups across coordinators: test/coordinator/server.test.ts.)
import { request } from 'node:http'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rows } from '../../../src/coordinator/db/client.js'
import { Waker } from '../../../src/coordinator/dispatch/waker.js'
import { createLog } from '../../../src/log/log.js'
import { tokens, useTestApp } from '../../support/app.js'
import { definition, workspace } from '../../support/fixtures.js'
import { type Served, serveCoordinator } from '../../support/served.js'
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

// On the server the coordinator asks Node's response whether the worker has gone (http/deadline.ts isGone):
// the same answer as the request's signal (both are told by the connection's close), seen over HTTP.
describe('a claim whose worker has gone, served over HTTP', () => {
  const waker = new Waker()
  const lines: string[] = []
  let served: Served
  beforeAll(async () => {
    const log = createLog({ name: 'coordinator', level: 'info', stream: { write: (l) => lines.push(l) } })
    served = await serveCoordinator(() => ({ waker, log, config: { claimPollMs: 60_000 } }))
    await served.request('POST', '/v1/subagents', { body: definition() })
  })
  afterAll(() => served.stop())

  it('leaves a dispatch queued when the worker hung up while its claim waited', async () => {
    const claim = request(`${served.server.url}/v1/worker/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.worker}`, 'content-type': 'application/json' },
    })
    claim.on('error', () => {})
    claim.end(JSON.stringify({ workerId: 'hung-up', waitMs: 20_000 }))
    await waitFor(() => waker.waiting === 1, { what: 'the claim to be parked' })
    const id = crypto.randomUUID()
    await served.t.db.orm.execute(
      sql`INSERT INTO dispatches (id, subagent_name, subagent_version, workspace)
          VALUES (${id}, 'frontend-fixer', 1, ${JSON.stringify(workspace)}::jsonb)`,
    )
    claim.destroy()
    // the claim's handler has ended once its access record is written
    await waitFor(() => lines.some((l) => l.includes('"route":"/v1/worker/claim"')), {
      what: 'the claim to end',
    })
    expect((await served.request('GET', `/v1/dispatches/${id}`)).body).toMatchObject({
      status: 'queued',
      attempt: 0,
    })
  })
})

describe('a claim woken while it looked', () => {
  // Polling slower than the test: only a wake-up answers the claim in time.
  const h = useTestApp({ claimPollMs: 60_000 })
  beforeAll(async () => {
    await h.call('POST', '/v1/subagents', { body: definition() })
  })

  const sleeping = async () =>
    (
      await rows(
        h.t.db.orm,
        sql`SELECT 1 AS one FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event = 'PgSleep'`,
      )
    ).length > 0

  it('claims a dispatch queued while its look ran at once, not at its next poll', async () => {
    // Every UPDATE of dispatches (the claim's statement is one) sleeps after it has taken its snapshot: a
    // dispatch queued meanwhile is not in that look, and its wake-up comes before the claim waits.
    await h.t.db.orm.execute(
      sql.raw(`CREATE FUNCTION slow_look() RETURNS trigger LANGUAGE plpgsql
               AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$`),
    )
    await h.t.db.orm.execute(
      sql.raw(
        'CREATE TRIGGER slow_look BEFORE UPDATE ON dispatches FOR EACH STATEMENT EXECUTE FUNCTION slow_look()',
      ),
    )
    try {
      const waiting = h.call('POST', '/v1/worker/claim', {
        role: 'worker',
        body: { workerId: 'w', waitMs: 4_000 },
      })
      await waitFor(sleeping, { what: "the claim's look to sleep" })
      const created = await h.call('POST', '/v1/dispatches', {
        body: { subagent: 'frontend-fixer', workspace },
      })
      expect(created.status).toBe(201)
      const claimed = await waiting
      expect(claimed.status).toBe(200)
      expect(claimed.body.dispatch.id).toBe(created.body.id)
    } finally {
      // the database may serve the next test file
      await h.t.db.orm.execute(sql.raw('DROP TRIGGER slow_look ON dispatches'))
      await h.t.db.orm.execute(sql.raw('DROP FUNCTION slow_look()'))
    }
  }, 10_000)
})
