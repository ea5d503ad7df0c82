// Webhook deliveries from the outbox to a local receiver: signed, retried, never lost across a stop,
// sent once with two coordinators, and the two events: a failed dispatch and a drifting requirement.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  listRequirements,
  type SubagentDefinition,
  verifyWebhook,
  type WebhookBody,
} from '../../../src/contract/index.js'
import {
  type Deliverer,
  type DeliveryConfig,
  startDeliverer,
} from '../../../src/coordinator/alerts/deliver.js'
import { rows } from '../../../src/coordinator/db/client.js'
import { sweepLeases } from '../../../src/coordinator/db/leases.js'
import { silentLog } from '../../../src/log/log.js'
import { useTestApp } from '../../support/app.js'
import { claim, definition, fenceOf, lapseLease, queueDispatch, reportFor } from '../../support/fixtures.js'
import { met, seedReport, unmet } from '../../support/reports-fixtures.js'
import { waitFor } from '../../support/wait.js'

const h = useTestApp({ maxAttempts: 1 })
const FAST: DeliveryConfig = { pollMs: 50, retryBaseMs: 50, maxAttempts: 3, timeoutMs: 300 }

interface Received {
  body: WebhookBody
  raw: string
  headers: IncomingMessage['headers']
}

// A receiver that answers each request with the next of `answers` (then 200), and records it.
let receiver: Server
let url: string
let received: Received[] = []
let answers: number[] = []
let hang = false

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk) => {
      raw += chunk
    })
    req.on('end', () => {
      received.push({ body: JSON.parse(raw), raw, headers: req.headers })
      if (hang) return
      res.statusCode = answers.shift() ?? 200
      res.end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
})

afterAll(async () => {
  receiver.closeAllConnections()
  await new Promise((resolve) => receiver.close(resolve))
})

const running: Deliverer[] = []
function deliverer(config = FAST): Deliverer {
  const d = startDeliverer(h.t.db.orm, config, silentLog)
  running.push(d)
  return d
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.stop()))
  await h.t.db.orm.execute(sql`DELETE FROM webhooks`)
  received = []
  answers = []
  hang = false
})

async function register(events: string[], secret = 'test-webhook-secret-0123456789') {
  const r = await h.call('POST', '/v1/webhooks', { body: { url, events, secret } })
  expect(r.status).toBe(201)
  return { id: r.body.id as number, secret }
}

// A dispatch that ends setup_failed through the worker API.
async function failSetup(name = 'alerted'): Promise<string> {
  const id = await queueDispatch(h, definition(name))
  const c = await claim(h)
  const body = { ...fenceOf(c), status: 'setup_failed', reason: 'setup-exit', detail: 'exited 1' }
  expect((await h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })).status).toBe(200)
  return id
}

async function report(def: SubagentDefinition, status: 'met' | 'unmet'): Promise<string> {
  const id = await queueDispatch(h, def)
  const c = await claim(h)
  const body = { ...fenceOf(c), report: reportFor(def, status) }
  expect((await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body })).status).toBe(200)
  return id
}

const deliveries = async (hook: number) => (await h.call('GET', `/v1/webhooks/${hook}/deliveries`)).body.items

describe('webhook deliveries', () => {
  it('posts a failed dispatch, signed with the secret and a fresh timestamp', async () => {
    const hook = await register(['dispatch.failed'])
    deliverer()
    const id = await failSetup()
    await waitFor(() => received.length === 1)
    const [got] = received
    if (!got) throw new Error('nothing received')
    expect(got.body).toMatchObject({
      event: 'dispatch.failed',
      data: { dispatchId: id, status: 'setup_failed', reason: 'setup-exit', subagent: { name: 'alerted' } },
    })
    expect(got.headers['preflight-event']).toBe('dispatch.failed')
    expect(got.headers['preflight-delivery']).toBe(got.body.id)
    const signature = got.headers['preflight-signature'] as string
    expect(verifyWebhook(hook.secret, signature, got.raw)).toBe(true)
    expect(verifyWebhook('another-secret-0123456789', signature, got.raw)).toBe(false)
    expect(verifyWebhook(hook.secret, signature, got.raw.replace('setup_failed', 'succeeded'))).toBe(false)
    // replayed ten minutes later
    expect(verifyWebhook(hook.secret, signature, got.raw, Date.now() + 600_000)).toBe(false)
    await waitFor(async () => (await deliveries(hook.id))[0]?.deliveredAt !== null)
    expect((await deliveries(hook.id))[0]).toMatchObject({
      attempts: 1,
      lastStatus: 200,
      nextAttemptAt: null,
    })
  })

  it('posts a dispatch whose agent used a program no requirement declares and that was not there', async () => {
    await register(['requirement.undeclared'])
    deliverer()
    const def = definition('undeclared-alert')
    const id = await queueDispatch(h, def)
    const fence = fenceOf(await claim(h))
    const reported = { ...fence, report: reportFor(def) }
    expect(
      (await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body: reported })).status,
    ).toBe(200)
    const pnpm = { kind: 'exec', name: 'pnpm', state: 'missing', searched: '/usr/bin:/bin' }
    const ls = { kind: 'exec', name: 'ls', state: 'present', path: '/usr/bin/ls' }
    const body = {
      ...fence,
      exitCode: 127,
      observed: { source: 'trace', exec: [{ name: 'pnpm' }, { name: 'ls', path: '/usr/bin/ls' }], paths: [] },
      undeclared: [pnpm, ls],
    }
    expect((await h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })).status).toBe(200)
    await waitFor(() => received.length === 1)
    expect(received[0]?.body).toMatchObject({
      event: 'requirement.undeclared',
      data: {
        dispatchId: id,
        subagent: { name: 'undeclared-alert', version: 1 },
        exitCode: 127,
        undeclared: [pnpm],
        source: 'trace',
      },
    })
    // a failure for another reason is no such event
    await failSetup('undeclared-other')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(received).toHaveLength(1)
  })

  it('keeps what happened while no coordinator sent, and sends it when one starts', async () => {
    await register(['dispatch.failed'])
    const id = await failSetup()
    expect(received).toEqual([])
    deliverer()
    await waitFor(() => received.length === 1)
    expect(received[0]?.body.data.dispatchId).toBe(id)
  })

  it('sends again a delivery whose coordinator stopped before the receiver answered', async () => {
    await register(['dispatch.failed'])
    hang = true
    const first = deliverer({ ...FAST, timeoutMs: 200 })
    await failSetup()
    await waitFor(() => received.length === 1)
    await first.stop()
    hang = false
    deliverer()
    await waitFor(() => received.length === 2)
    expect(received[1]?.body.id).toBe(received[0]?.body.id)
  })

  it('tries a receiver that failed twice a third time, and logs each try', async () => {
    const hook = await register(['dispatch.failed'])
    answers = [500, 503]
    deliverer()
    await failSetup()
    await waitFor(() => received.length === 3)
    await waitFor(async () => (await deliveries(hook.id))[0]?.deliveredAt !== null)
    expect((await deliveries(hook.id))[0]).toMatchObject({ attempts: 3, lastStatus: 200, lastError: null })
  })

  it('gives up after the last try and says why', async () => {
    const hook = await register(['dispatch.failed'])
    answers = [500, 500, 500, 500]
    deliverer()
    await failSetup()
    await waitFor(async () => (await deliveries(hook.id))[0]?.failedAt !== null)
    expect((await deliveries(hook.id))[0]).toMatchObject({
      attempts: 3,
      lastStatus: 500,
      lastError: 'HTTP 500',
    })
    expect(received).toHaveLength(3)
  })

  it('logs a receiver that is not there', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const r = await h.call('POST', '/v1/webhooks', {
      body: { url: `http://127.0.0.1:${port}/nobody`, events: ['dispatch.failed'] },
    })
    deliverer({ ...FAST, maxAttempts: 1 })
    await failSetup()
    await waitFor(async () => (await deliveries(r.body.id))[0]?.failedAt !== null)
    expect((await deliveries(r.body.id))[0]).toMatchObject({ lastStatus: null, lastError: 'ECONNREFUSED' })
  })

  it('sends each delivery once with two coordinators sending', async () => {
    await register(['dispatch.failed'])
    for (let i = 0; i < 8; i++) await failSetup(`twice-${i}`)
    deliverer()
    deliverer()
    await waitFor(() => received.length >= 8)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(new Set(received.map((r) => r.body.id)).size).toBe(received.length)
  })

  it('announces a dispatch that expired, and nothing for one that succeeded', async () => {
    await register(['dispatch.failed'])
    const expiring = await queueDispatch(h, definition('expiring'))
    await claim(h)
    await lapseLease(h, expiring)
    await sweepLeases(h.t.db.orm)
    const def = definition('fine')
    const ok = await report(def, 'met')
    deliverer()
    await waitFor(() => received.length === 1)
    expect(received[0]?.body.data).toMatchObject({ dispatchId: expiring, status: 'expired' })
    expect(received.some((r) => r.body.data.dispatchId === ok)).toBe(false)
  })

  it('announces a requirement that held and then failed, once', async () => {
    await register(['requirement.drifted'])
    const def = definition('drifting')
    await report(def, 'unmet')
    await report(def, 'met')
    const drifted = await report(def, 'unmet')
    await report(def, 'unmet')
    deliverer()
    const requirements = listRequirements(def.contextRequires).length
    await waitFor(() => received.length === requirements)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(received).toHaveLength(requirements)
    expect(new Set(received.map((r) => r.body.data.dispatchId))).toEqual(new Set([drifted]))
    expect(received.find((r) => r.body.data.requirement === 'node')?.body).toMatchObject({
      event: 'requirement.drifted',
      data: {
        subagent: 'drifting',
        kind: 'exec',
        status: 'unmet',
        reason: 'not-found',
        lastMetAt: expect.any(String),
      },
    })
  })

  // The last met result is read from requirement_rollups: a report stored late, older than that met
  // one, did not follow it, so it is no drift.
  it('does not announce a failure older than the last met result', async () => {
    await register(['requirement.drifted'])
    const drifted = sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event = 'requirement.drifted'`
    await seedReport(h.t.db.orm, { subagent: 'late', at: '2026-03-02T00:00:00Z', results: [met('node')] })
    await seedReport(h.t.db.orm, { subagent: 'late', at: '2026-03-01T00:00:00Z', results: [unmet('node')] })
    expect(await rows(h.t.db.orm, drifted)).toEqual([{ n: 0 }])
    await seedReport(h.t.db.orm, { subagent: 'late', at: '2026-03-03T00:00:00Z', results: [unmet('node')] })
    expect(await rows(h.t.db.orm, drifted)).toEqual([{ n: 1 }])
  })
})
