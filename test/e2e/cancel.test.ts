// End to end: an orchestrator cancels dispatches at every point before their end, and deadlines end
// them; a real coordinator, a real worker (through an HTTP proxy the test can hold a request in), real
// setup scripts and agents whose process groups are looked for in /proc.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  agentOutbox,
  call,
  type DispatchView,
  e2eSuite,
  getDispatch,
  type Proc,
  register,
  serveCoordinator,
  spawnWorker,
  stepsOf,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'
import { waitFor } from '../support/wait.js'

const suite = e2eSuite({ 'package.json': '{}\n' })
let coordinator: { url: string }
let worker: Proc
let proxy: HoldingProxy
// how many times the cancel of a running agent is timed (E2E_CANCEL_RUNS=20 for the figures)
const RUNS = Number(process.env.E2E_CANCEL_RUNS ?? 3)
// Cancel to stopped: the worker learns it within a second and a round trip (its beat), then kills.
// (That beats come at least every second is test/worker/lease.test.ts's to hold.) With --agent-uid
// the slot uid's sweep reads every process's status first: 3 s there, where under a whole suite's
// load on 2 cores it once took 2.6 s.
const STOPPED_WITHIN_MS = 2_000
const SWEPT_WITHIN_MS = 3_000

beforeAll(async () => {
  coordinator = await serveCoordinator(suite)
  proxy = await holdingProxy(coordinator.url)
  worker = spawnWorker(proxy.url, { workdir: join(suite.scratch, 'work'), id: 'cancel-e2e' })
})
afterAll(() => proxy?.close())

interface Cancellation {
  by: { tokenId: number | null; role: string }
  reason?: string
  at: string
}
type View = DispatchView & {
  cancel?: Cancellation
  deadline?: string
  completion?: DispatchView['completion'] & { durationMs?: number }
}

const wait = (id: string) => waitForStatus(coordinator.url, id, 60_000, [worker]) as Promise<View>

async function create(subagent: string, extra: Record<string, unknown> = {}, workspace = {}) {
  const body = { subagent, workspace: { repo: suite.repo, ...workspace }, ...extra }
  return (await call<{ id: string }>(coordinator.url, 'POST', '/v1/dispatches', TOKENS.orchestrator, body)).id
}

// A cancelled dispatch is cancelled at once; what its worker had comes with the worker's completion.
async function stopped(id: string): Promise<View> {
  await waitFor(async () => workerEnding(id) !== undefined, {
    timeoutMs: 10_000,
    everyMs: 100,
    what: () => worker.output(),
  })
  return (await getDispatch(coordinator.url, id)) as View
}

// The canceller's answer, whatever its status.
async function cancel(id: string, reason?: string) {
  const res = await fetch(`${coordinator.url}/v1/dispatches/${id}/cancel`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.orchestrator}`, 'content-type': 'application/json' },
    body: JSON.stringify(reason === undefined ? {} : { reason }),
  })
  return {
    status: res.status,
    body: (await res.json()) as { id?: string; status?: string; error?: { details: { status: string } } },
  }
}

// A script that writes its pid (its process group's id) to `pidFile`, says something, and waits on two
// children of its group for ever.
const longRunning = (pidFile: string, say: string) =>
  `echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; echo ${say}; sleep 300 & sleep 300 & wait`

// Live (not zombie) processes of a process group, from /proc.
function group(pgid: number): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(pgrp) === pgid && state !== 'Z') found.push(Number(entry))
    } catch {
      // gone while read
    }
  }
  return found
}

// Resolves with the ms from `since` until the group has no live process (polled every 20 ms: a poll
// reads the stat of every process on the machine).
async function goneAfter(pgid: number, since: number, within = 10_000): Promise<number> {
  while (group(pgid).length > 0) {
    if (Date.now() - since > within) throw new Error(`group ${pgid} still runs ${group(pgid)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
  return Date.now() - since
}

async function pidFrom(file: string): Promise<number> {
  await waitFor(async () => existsSync(file), {
    timeoutMs: 30_000,
    everyMs: 100,
    what: () => worker.output(),
  })
  return Number((await readFile(file, 'utf8')).trim())
}

// The worker's own account of how a dispatch ended.
const workerEnding = (id: string) =>
  worker.records().find((r) => r.msg === 'dispatch ended' && r.dispatchId === id)?.ending

describe('cancel', () => {
  it('stops a running agent and its whole process group within 2 s, and keeps what it had', async () => {
    const took: number[] = []
    for (let run = 0; run < RUNS; run++) {
      const pidFile = join(suite.scratch, `agent-${run}.pid`)
      const name = `cancel-agent-${run}`
      await register(coordinator.url, {
        name,
        agent: { command: ['sh', '-c', longRunning(pidFile, `partial-output-${run}`)] },
        contextRequires: { paths: ['package.json'] },
      })
      const id = await create(name)
      const pgid = await pidFrom(pidFile)
      expect(group(pgid).length).toBeGreaterThan(0)
      // the agent said something before the cancel: its line is in the tail
      await waitFor(async () => worker.output().includes(`partial-output-${run}`), {
        timeoutMs: 10_000,
        everyMs: 100,
      })
      const at = Date.now()
      const answer = await cancel(id, 'the task was abandoned')
      took.push(await goneAfter(pgid, at))
      expect(answer).toEqual({ status: 200, body: { id, status: 'cancelled' } })
      const d = await stopped(id)
      expect(workerEnding(id)).toBe('cancelled')
      expect(d.status).toBe('cancelled')
      expect(d.cancel).toMatchObject({
        by: { role: 'orchestrator', tokenId: expect.any(Number) },
        reason: 'the task was abandoned',
      })
      expect(d.preflight?.outcome).toBe('met')
      expect(d.completion).toMatchObject({ status: 'cancelled', baseline: { tree: expect.any(String) } })
      expect(d.completion?.detail).toContain(`partial-output-${run}`)
      // a retry answers the same, and keeps who cancelled first
      expect(await cancel(id, 'again')).toEqual({ status: 200, body: { id, status: 'cancelled' } })
      expect((await getDispatch(coordinator.url, id)).status).toBe('cancelled')
    }
    const sorted = [...took].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]
    console.log(`cancel-to-stopped over ${RUNS} runs: median ${median} ms, max ${sorted.at(-1)} ms (${took})`)
    expect(Math.max(...took)).toBeLessThanOrEqual(STOPPED_WITHIN_MS)
  }, 180_000)

  it('stops setup and its process group; the agent never starts and nothing is checked', async () => {
    const pidFile = join(suite.scratch, 'setup.pid')
    const marker = join(suite.scratch, 'setup-agent-ran')
    await register(coordinator.url, {
      name: 'cancel-setup',
      agent: { command: ['sh', '-c', `touch ${marker}`] },
    })
    const id = await create('cancel-setup', {}, { setup: ['sh', '-c', longRunning(pidFile, 'setting-up')] })
    const pgid = await pidFrom(pidFile)
    await waitFor(async () => worker.output().includes('setting-up'), { timeoutMs: 10_000, everyMs: 100 })
    const at = Date.now()
    expect((await cancel(id)).status).toBe(200)
    expect(await goneAfter(pgid, at)).toBeLessThanOrEqual(STOPPED_WITHIN_MS)
    const d = await stopped(id)
    expect(workerEnding(id)).toBe('cancelled')
    expect(d.status).toBe('cancelled')
    expect(d.cancel?.reason).toBeUndefined()
    expect(d.preflight).toBeUndefined()
    expect(d.completion).toMatchObject({ status: 'cancelled' })
    expect(d.completion?.detail).toContain('setting-up')
    expect(existsSync(marker)).toBe(false)
  })

  it('between the report and the agent: the agent never starts, the report and baseline are kept', async () => {
    const marker = join(suite.scratch, 'between-agent-ran')
    await register(coordinator.url, {
      name: 'cancel-between',
      agent: { command: ['sh', '-c', `touch ${marker}`] },
      contextRequires: { paths: ['package.json'] },
    })
    // the worker's `agent` event is held at the proxy: the report is stored (running) and the baseline taken
    const held = proxy.hold((path, body) => path.endsWith('/events') && body.includes('"step":"agent"'))
    const id = await create('cancel-between')
    await held.arrived
    expect((await getDispatch(coordinator.url, id)).status).toBe('running')
    expect((await cancel(id, 'changed my mind')).status).toBe(200)
    held.release()
    const d = await stopped(id)
    expect(workerEnding(id)).toBe('cancelled')
    expect(d.status).toBe('cancelled')
    expect(d.preflight?.outcome).toBe('met')
    expect(d.completion).toMatchObject({ status: 'cancelled', baseline: { tree: expect.any(String) } })
    expect(stepsOf(d)).not.toContain('agent')
    expect(existsSync(marker)).toBe(false)
  })

  it('racing a completion has one winner, and the canceller and the worker see the same one', async () => {
    // an agent that ends by itself about when the cancel comes: each order happens over the runs (each
    // of the four pauses twice)
    const outcomes: string[] = []
    for (let run = 0; run < 8; run++) {
      const pidFile = join(suite.scratch, `race-${run}.pid`)
      const name = `cancel-race-${run}`
      const pause = (run % 4) * 0.1
      await register(coordinator.url, {
        name,
        agent: { command: ['sh', '-c', `echo $$ > ${pidFile}; sleep ${pause}; exit 0`] },
      })
      const id = await create(name)
      await pidFrom(pidFile)
      const answer = await cancel(id)
      const d = await stopped(id)
      const said = answer.status === 200 ? answer.body.status : answer.body.error?.details.status
      expect([200, 409]).toContain(answer.status)
      expect(said).toBe(d.status)
      expect(workerEnding(id)).toBe(d.status)
      outcomes.push(d.status)
    }
    console.log(`cancel racing a completion: ${outcomes.join(' ')}`)
  }, 180_000)
})

describe('deadlines', () => {
  it('stops a running agent at the deadline: failed, reason deadline, listed by it', async () => {
    const pidFile = join(suite.scratch, 'deadline.pid')
    await register(coordinator.url, {
      name: 'deadline-agent',
      agent: { command: ['sh', '-c', longRunning(pidFile, 'working')] },
    })
    const id = await create('deadline-agent', { timeoutMs: 4_000 })
    const pgid = await pidFrom(pidFile)
    const d = await wait(id)
    expect(group(pgid)).toEqual([])
    expect(d.status).toBe('failed')
    expect(d.completion).toMatchObject({ reason: 'deadline', exitCode: 143 })
    expect(Date.parse(d.events.at(-1)?.at ?? '')).toBeGreaterThanOrEqual(Date.parse(d.deadline ?? ''))
    expect(stepsOf(d)).toContain('agent-timeout')
    const listed = await call<{ items: { id: string }[] }>(
      coordinator.url,
      'GET',
      '/v1/dispatches?reason=deadline&status=failed',
      TOKENS.operator,
    )
    expect(listed.items.map((i) => i.id)).toContain(id)
  })

  it('never claims a queued dispatch past its deadline: it ends expired, reason deadline', async () => {
    // the worker is busy with a long agent; the second dispatch waits in the queue past its deadline
    const pidFile = join(suite.scratch, 'busy.pid')
    await register(coordinator.url, {
      name: 'deadline-busy',
      agent: { command: ['sh', '-c', longRunning(pidFile, 'busy')] },
    })
    await register(coordinator.url, { name: 'deadline-queued', agent: { command: ['true'] } })
    const busy = await create('deadline-busy')
    await pidFrom(pidFile)
    const late = await create('deadline-queued', { deadline: new Date(Date.now() + 1_000).toISOString() })
    await waitFor(async () => (await getDispatch(coordinator.url, late)).status === 'expired', {
      timeoutMs: 10_000,
      everyMs: 100,
    })
    await cancel(busy)
    await wait(busy)
    const d = (await getDispatch(coordinator.url, late)) as View
    expect(d).toMatchObject({ status: 'expired', attempt: 0 })
    expect(stepsOf(d, 0)).toEqual(['created', 'expired'])
    const listed = await call<{ items: { id: string }[] }>(
      coordinator.url,
      'GET',
      '/v1/dispatches?reason=deadline&status=expired',
      TOKENS.operator,
    )
    expect(listed.items.map((i) => i.id)).toContain(late)
  })
})

// Live (not zombie) processes whose real uid is `uid`, from /proc.
function processesOf(uid: number): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8')
      const real = /^Uid:\s+(\d+)/m.exec(status)?.[1]
      const state = /^State:\s+(\S)/m.exec(status)?.[1]
      if (Number(real) === uid && state !== 'Z') found.push(Number(entry))
    } catch {
      // gone while read
    }
  }
  return found
}

const isRoot = process.getuid?.() === 0
// a slot uid no other suite uses
const SLOT_UID = 63_400

// Only root can switch uids. A second worker, started for this test alone (it would take any dispatch).
describe.runIf(isRoot)('cancel under --agent-uid', () => {
  it('stops every process of the slot uid, one that left the process group too', async () => {
    const outbox = await agentOutbox(suite)
    const isolated = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'iso-work'),
      id: 'cancel-iso',
      args: ['--agent-uid', String(SLOT_UID), '--label', 'iso'],
    })
    try {
      const pidFile = join(outbox, 'iso.pid')
      // the escapee is a session of its own: only the slot uid's sweep finds it
      const script = `setsid sleep 300 & echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; sleep 300 & wait`
      await register(coordinator.url, { name: 'cancel-iso', agent: { command: ['sh', '-c', script] } })
      const id = await create('cancel-iso', { labels: ['iso'] })
      await pidFrom(pidFile)
      await waitFor(async () => processesOf(SLOT_UID).length >= 3, { timeoutMs: 10_000, everyMs: 100 })
      const at = Date.now()
      expect((await cancel(id)).status).toBe(200)
      await waitFor(async () => processesOf(SLOT_UID).length === 0, {
        timeoutMs: 5_000,
        everyMs: 100,
        what: () => isolated.output(),
      })
      const took = Date.now() - at
      console.log(`cancel-to-stopped under --agent-uid (every process of the slot uid): ${took} ms`)
      expect(took).toBeLessThanOrEqual(SWEPT_WITHIN_MS)
      await waitFor(
        async () => isolated.records().some((r) => r.msg === 'dispatch ended' && r.ending === 'cancelled'),
        { timeoutMs: 10_000, everyMs: 100, what: () => isolated.output() },
      )
    } finally {
      await isolated.stop()
    }
  })
})

interface HoldingProxy {
  url: string
  // Holds the first request `match` picks until release(); `arrived` resolves when it came.
  hold(match: (path: string, body: string) => boolean): { arrived: Promise<void>; release(): void }
  close(): Promise<void>
}

// An HTTP proxy in front of the coordinator for the worker, which can hold one request back.
async function holdingProxy(target: string): Promise<HoldingProxy> {
  let holder: {
    match: (path: string, body: string) => boolean
    arrived: () => void
    released: Promise<void>
  }[] = []
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString()
    const path = req.url ?? '/'
    const held = holder.find((h) => h.match(path, body))
    if (held) {
      holder = holder.filter((h) => h !== held)
      held.arrived()
      await held.released
    }
    try {
      const answer = await fetch(`${target}${path}`, {
        method: req.method ?? 'GET',
        headers: {
          authorization: req.headers.authorization ?? '',
          'content-type': req.headers['content-type'] ?? 'application/json',
        },
        ...(body ? { body } : {}),
      })
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
      res.end(Buffer.from(await answer.arrayBuffer()))
    } catch {
      res.destroy()
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    hold(match) {
      let arrived = () => {}
      let release = () => {}
      const arrival = new Promise<void>((r) => {
        arrived = r
      })
      const released = new Promise<void>((r) => {
        release = r
      })
      holder.push({ match, arrived, released })
      return { arrived: arrival, release }
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
