// The soak test (`npm run soak`, docs/operations.md "Soak test"): dispatches through two coordinators on
// one database and three workers while workers are SIGKILLed and SIGSTOPped, a coordinator restarts and
// the database is cut off behind a TCP proxy. Then the database is read directly and every promise is
// checked: all ended, no agent without `proceed`, a re-run only after its worker's fault, one dispatch per
// idempotency key, completions of the last attempt, no 5xx but 503. SOAK_DISPATCHES sets the count.

import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chaos, type Fault } from '../support/chaos.js'
import {
  type Coordinator,
  e2eSuite,
  type Proc,
  register,
  spawnWorker,
  startCoordinator,
  TERMINAL,
  TOKENS,
} from '../support/e2e.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'
import { waitFor } from '../support/wait.js'

const DISPATCHES = Number(process.env.SOAK_DISPATCHES ?? 200)
// Longer than the database outage and a coordinator's restart (a few seconds on a loaded machine), so
// only a worker's own fault takes its leases away.
const LEASE_MS = 10_000
const suite = e2eSuite()
let proxy: TcpProxy
let sql: postgres.Sql
const coordinators: Coordinator[] = []
const workers = new Map<string, Proc>()
// Answers ≥ 500 other than 503, as the orchestrator saw them
const fiveHundreds: string[] = []

function launch(id: string): Proc {
  const url = coordinators[Number(id.slice(1)) % 2]?.url ?? ''
  const proc = spawnWorker(url, { workdir: join(suite.scratch, id), id, args: ['--concurrency', '2'] })
  workers.set(id, proc)
  return proc
}

beforeAll(async () => {
  const db = new URL(suite.db.url ?? '')
  proxy = await startTcpProxy({ host: db.hostname, port: Number(db.port || 5432) })
  sql = postgres(suite.db.url ?? '', { max: 2, onnotice: () => {} })
  for (let i = 0; i < 2; i++)
    coordinators.push(await startCoordinator(proxy.via(suite.db.url ?? ''), undefined, LEASE_MS))
  const runs = JSON.stringify(join(suite.scratch, 'runs.log'))
  // the workspace is <workdir>/<dispatch id>-<attempt>: its name says which attempt ran
  const agent = ['sh', '-c', `echo "$(basename "$PWD")" >> ${runs}; sleep 0.2`]
  await register(coordinators[0]?.url ?? '', {
    name: 'soak-met',
    agent: { command: agent },
    contextRequires: { paths: ['package.json'], exec: ['sh'] },
  })
  await register(coordinators[0]?.url ?? '', {
    name: 'soak-unmet',
    agent: { command: agent },
    contextRequires: { paths: ['never-there.txt'] },
  })
  for (const id of ['w1', 'w2', 'w3']) launch(id)
}, 120_000)

afterAll(async () => {
  await proxy?.close()
  await sql?.end({ timeout: 5 })
})

// An orchestrator that retries what it may (network errors, 429, 503) with the same idempotency key.
async function create(i: number): Promise<string> {
  const body = {
    subagent: i % 5 === 0 ? 'soak-unmet' : 'soak-met',
    workspace: { repo: suite.repo },
    idempotencyKey: `soak-${i}`,
  }
  for (let tries = 0; ; tries++) {
    const url = coordinators[(i + tries) % 2]?.url ?? ''
    const res = await fetch(`${url}/v1/dispatches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.orchestrator}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).catch(() => undefined)
    if (res?.ok) return ((await res.json()) as { id: string }).id
    if (res && res.status >= 500 && res.status !== 503) fiveHundreds.push(`create ${i}: ${res.status}`)
    if (res && res.status < 500 && res.status !== 429)
      throw new Error(`create ${i}: ${res.status} ${await res.text()}`)
    if (tries > 200) throw new Error(`create ${i}: no answer after ${tries} tries`)
    await sleep(100)
  }
}

// Non-503 5xx answers a coordinator counted, from its /metrics (taken before it restarts, and at the end).
async function serverErrors(c: Coordinator): Promise<number> {
  const res = await fetch(`${c.url}/metrics`).catch((err) => {
    throw new Error(`${c.url}/metrics: ${err.cause ?? err}\n${c.output().slice(-3_000)}`)
  })
  const text = await res.text()
  let n = 0
  for (const m of text.matchAll(/^preflight_http_request_duration_seconds_count\{([^}]*)\} (\d+)/gm)) {
    const status = /status="(\d+)"/.exec(m[1] ?? '')?.[1] ?? ''
    if (status.startsWith('5') && status !== '503') n += Number(m[2])
  }
  return n
}

describe('soak', () => {
  it(`${DISPATCHES} dispatches end honestly through worker kills, a coordinator restart and a database outage`, async () => {
    const started = Date.now()
    const ids = new Map<number, string>()
    // batches of 8, spread over about as long as the faults take, so work is in flight at each of them
    const paceMs = (4 * LEASE_MS + 5_000) / Math.ceil(DISPATCHES / 8)
    const creating = (async () => {
      for (let i = 0; i < DISPATCHES; i += 8) {
        const batch = Array.from({ length: Math.min(8, DISPATCHES - i) }, (_, k) => i + k)
        await Promise.all(batch.map(async (n) => ids.set(n, await create(n))))
        await sleep(paceMs)
      }
    })()
    const ended = async () =>
      Number((await sql`SELECT count(*) AS n FROM dispatches WHERE status = ANY(${TERMINAL})`)[0]?.n ?? 0)
    // the faults begin once the first dispatches have ended: the system is busy when they hit
    await waitFor(async () => (await ended()) >= 4, { timeoutMs: 120_000, everyMs: 100 })
    let errors = 0
    const faults: Fault[] = await chaos({
      leaseMs: LEASE_MS,
      workers,
      respawn: launch,
      proxy,
      coordinators,
      async restart(c) {
        errors += await serverErrors(c)
        await c.stop()
        return startCoordinator(proxy.via(suite.db.url ?? ''), Number(new URL(c.url).port), LEASE_MS)
      },
    })
    await creating
    // a duplicate create, on the other coordinator, answers the same dispatch
    for (const i of [1, 2, 3]) expect(await create(i + 1)).toBe(ids.get(i + 1))
    await waitFor(async () => (await ended()) === DISPATCHES, {
      timeoutMs: 240_000,
      everyMs: 100,
      what: () => [...workers.values()].map((w) => w.output().slice(-2_000)).join('\n---\n'),
    })
    for (const c of coordinators) errors += await serverErrors(c)
    const seconds = (Date.now() - started) / 1000

    const dispatches = await sql<{ id: string; status: string; attempt: number; subagent_name: string }[]>`
      SELECT id, status, attempt, subagent_name FROM dispatches`
    const proceeded = new Set(
      (await sql`SELECT dispatch_id, attempt FROM preflight_reports WHERE decision = 'proceed'`).map(
        (r) => `${r.dispatch_id}-${r.attempt}`,
      ),
    )
    const events = await sql<
      { dispatch_id: string; attempt: number; step: string; worker: string | null; at: Date }[]
    >`
      SELECT d.id AS dispatch_id, (e ->> 'attempt')::int AS attempt, e ->> 'step' AS step,
             e -> 'detail' ->> 'workerId' AS worker, (e ->> 'at')::timestamptz AS at
      FROM dispatches d, jsonb_array_elements(d.events) WITH ORDINALITY AS x(e, n) ORDER BY d.id, n`
    const runs = (await readFile(join(suite.scratch, 'runs.log'), 'utf8')).trim().split('\n')

    // every dispatch ended, and as its requirements say
    expect(dispatches).toHaveLength(DISPATCHES)
    const wrong = dispatches.filter(
      (d) => d.status !== (d.subagent_name === 'soak-met' ? 'succeeded' : 'preflight_failed'),
    )
    const story = (id: string) =>
      events
        .filter((e) => e.dispatch_id === id)
        .map((e) => `${e.at.toISOString().slice(11, 23)} ${e.attempt} ${e.step} ${e.worker ?? ''}`)
    expect(wrong.map((d) => [d.status, ...story(d.id)])).toEqual([])
    // no agent ran without a stored `proceed` for its attempt, and none twice in one attempt
    expect(runs.filter((r) => !proceeded.has(r))).toEqual([])
    expect(runs.length).toBe(new Set(runs).size)
    // an agent ran again only when the worker of its earlier attempt had a fault: the lease of that
    // attempt expired, and it was held by a worker this test killed or stopped
    const faulted = new Set(faults.map((f) => f.worker))
    const held = (id: string, attempt: number) =>
      events.find((e) => e.dispatch_id === id && e.attempt === attempt && e.step === 'claimed')?.worker
    const expired = (id: string, attempt: number) =>
      events.some((e) => e.dispatch_id === id && e.attempt === attempt && e.step === 'lease-expired')
    const last = new Map(dispatches.map((d) => [d.id, d.attempt]))
    const reruns = runs
      .map((r) => ({ id: r.slice(0, 36), attempt: Number(r.slice(37)) }))
      .filter((r) => r.attempt !== last.get(r.id))
    const unexplained = reruns.filter(
      (r) => !expired(r.id, r.attempt) || !faulted.has(held(r.id, r.attempt) ?? ''),
    )
    expect(unexplained.map((r) => [r.attempt, ...story(r.id)])).toEqual([])
    // one completion per dispatch, of its last attempt
    const completions = events.filter((e) => e.step === 'completed')
    expect(completions.filter((e) => e.attempt !== last.get(e.dispatch_id))).toEqual([])
    expect(new Set(completions.map((e) => e.dispatch_id)).size).toBe(completions.length)
    // no 5xx but 503, on either side
    expect(fiveHundreds).toEqual([])
    expect(errors).toBe(0)

    // how long a dead worker's dispatch waited: from its lease's expiry to its next claim
    const recoveries = events
      .filter((e) => e.step === 'lease-expired')
      .map((e) => {
        const next = events.find(
          (n) => n.dispatch_id === e.dispatch_id && n.step === 'claimed' && n.attempt === e.attempt + 1,
        )
        return next ? next.at.getTime() - e.at.getTime() : Number.NaN
      })
    const outage = faults.find((f) => f.kind === 'database')
    console.log(
      [
        `soak: ${DISPATCHES} dispatches in ${seconds.toFixed(0)} s, ${runs.length} agent runs (${reruns.length} re-runs after a fault)`,
        `faults: ${faults.map((f) => `${f.kind}${f.worker ? ` ${f.worker}` : ''} (${f.ms} ms)`).join(', ')}`,
        `leases expired: ${recoveries.length}; expiry to next claim: max ${Math.max(0, ...recoveries)} ms`,
        `database back after ${outage?.ms ?? '?'} ms away: both coordinators ready again ${outage?.recoveredMs ?? '?'} ms later`,
        `answers ≥ 500 other than 503: ${errors + fiveHundreds.length}`,
      ].join('\n'),
    )
    expect(outage?.recoveredMs ?? Infinity).toBeLessThanOrEqual(2_000)
  }, 300_000)
})
