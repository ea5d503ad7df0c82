import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'
import { waitFor } from '../../support/wait.js'

// The write statements re-check the fence: a lease taken over between a write's read and its
// UPDATE (here: while another transaction holds the row) still turns the write into 409.
describe('the fence at write time', () => {
  const h = useTestApp()
  let other: postgres.Sql
  let watcher: postgres.Sql
  beforeAll(async () => {
    other = postgres(h.t.url as string, { max: 1, onnotice: () => {} })
    watcher = postgres(h.t.url as string, { max: 1, onnotice: () => {} })
  })
  afterAll(async () => {
    await Promise.all([other.end(), watcher.end()])
  })

  // Holds the dispatch row, starts `write`, waits until it blocks on the row, then hands the
  // lease to someone else and lets the write continue.
  async function takeOverDuring<T>(id: string, write: () => Promise<T>): Promise<T> {
    let pending: Promise<T> | undefined
    await other.begin(async (tx) => {
      await tx`SELECT 1 FROM dispatches WHERE id = ${id} FOR UPDATE`
      pending = write()
      await waitUntilBlocked()
      await tx`UPDATE dispatches SET lease_token = 'taken-over', attempt = attempt + 1 WHERE id = ${id}`
    })
    return pending as Promise<T>
  }

  async function waitUntilBlocked() {
    await waitFor(
      async () => {
        const [row] = await watcher`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE dispatches%'`
        return row?.n > 0
      },
      { everyMs: 20, what: 'the write to block on the row' },
    )
  }

  it('refuses a report whose lease was taken over while it was written', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    const put = () =>
      h.call('PUT', `/v1/dispatches/${id}/preflight`, {
        role: 'worker',
        body: { ...fenceOf(c), report: reportFor(definition()) },
      })
    const r = await takeOverDuring(id, put)
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('lease-lost')
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.preflight).toBeUndefined()
  })

  it('refuses a completion whose lease was taken over while it was written', async () => {
    const id = await queueDispatch(h)
    const c = await claim(h)
    const body = { ...fenceOf(c), status: 'setup_failed', reason: 'setup-failed' }
    const r = await takeOverDuring(id, () =>
      h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body }),
    )
    expect(r.status).toBe(409)
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.completion).toBeUndefined()
  })
})
