// End to end: a worker killed mid-agent, and a coordinator restarted between report and complete (the
// coordinator a process of its own where it is stopped or killed, else served by the test process).
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  type Coordinator,
  call,
  dispatch,
  e2eSuite,
  getDispatch,
  register,
  serveCoordinator,
  spawnWorker,
  startCoordinator,
  stepsOf,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'
import { alive } from '../support/git-fixtures.js'
import { waitFor } from '../support/wait.js'

const suite = e2eSuite()
const LEASE_MS = 5_000
let coordinator: Coordinator
const agentPids: number[] = []

afterAll(async () => {
  // An agent whose worker was SIGKILLed keeps running (as it would until its container is removed);
  // it leads its own process group.
  for (const pid of agentPids) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {}
  }
})

// The first run blocks (a worker to kill); later runs finish at once. Each run appends its pid.
function blockingOnce(marker: string): string[] {
  const m = JSON.stringify(marker)
  return ['sh', '-c', `if [ -e ${m} ]; then echo $$ >> ${m}; else echo $$ >> ${m}; sleep 60; fi`]
}

async function lines(file: string): Promise<string[]> {
  return existsSync(file) ? (await readFile(file, 'utf8')).trim().split('\n') : []
}

async function reportsOf(url: string, id: string, subagent: string) {
  const page = await call<{ items: { dispatchId: string; attempt: number }[] }>(
    url,
    'GET',
    `/v1/reports?subagent=${subagent}`,
    TOKENS.operator,
  )
  return page.items.filter((r) => r.dispatchId === id).map((r) => r.attempt)
}

describe('resilience', () => {
  it('lets a second worker complete a dispatch whose worker was SIGKILLed during the agent', async () => {
    // Short leases, so the dead worker's dispatch comes back within seconds; not shorter than 5 s, or
    // on a loaded 2-core machine the surviving worker's lease ran out too (attempt 3, in 2 of 4 runs
    // with 2 s). (Workers are what this test kills: the coordinator is served by the test process.)
    const served = await serveCoordinator(suite, LEASE_MS)
    const marker = join(suite.scratch, 'killed.marker')
    await register(served.url, { name: 'e2e-killed', agent: { command: blockingOnce(marker) } })
    const first = spawnWorker(served.url, { workdir: join(suite.scratch, 'w1'), id: 'first' })
    const id = await dispatch(served.url, 'e2e-killed', { repo: suite.repo })
    await waitFor(async () => (await lines(marker)).length === 1, {
      timeoutMs: 30_000,
      everyMs: 100,
      what: first.output,
    })
    agentPids.push(Number((await lines(marker))[0]))
    await first.stop('SIGKILL')
    const second = spawnWorker(served.url, { workdir: join(suite.scratch, 'w2'), id: 'second' })
    const d = await waitForStatus(served.url, id, 45_000, [second])
    expect(d).toMatchObject({ status: 'succeeded', attempt: 2, completion: { exitCode: 0 } })
    expect(await lines(marker)).toHaveLength(2)
    expect(await reportsOf(served.url, id, 'e2e-killed')).toEqual([2, 1])
    expect(stepsOf(d, 2).filter((s) => s === 'agent')).toHaveLength(1)
    await Promise.all([second.stop(), served.stop()])
  }, 90_000)

  it('stops the agent of a worker that lost its lease and never completes that attempt', async () => {
    const served = await serveCoordinator(suite, LEASE_MS)
    const marker = join(suite.scratch, 'paused.marker')
    await register(served.url, { name: 'e2e-paused', agent: { command: blockingOnce(marker) } })
    const paused = spawnWorker(served.url, { workdir: join(suite.scratch, 'w4'), id: 'paused' })
    const id = await dispatch(served.url, 'e2e-paused', { repo: suite.repo })
    await waitFor(async () => (await lines(marker)).length === 1, {
      timeoutMs: 30_000,
      everyMs: 100,
      what: paused.output,
    })
    const firstAgent = Number((await lines(marker))[0])
    agentPids.push(firstAgent)
    // Frozen past its lease: the dispatch goes to another worker meanwhile.
    paused.child.kill('SIGSTOP')
    const other = spawnWorker(served.url, { workdir: join(suite.scratch, 'w5'), id: 'other' })
    const d = await waitForStatus(served.url, id, 45_000, [other])
    paused.child.kill('SIGCONT')
    await waitFor(async () => !alive(firstAgent), { timeoutMs: 30_000, everyMs: 100, what: paused.output })
    const after = await getDispatch(served.url, id)
    expect(d).toMatchObject({ status: 'succeeded', attempt: 2 })
    expect(after.completion).toEqual(d.completion)
    expect(after.events.filter((e) => e.step === 'completed')).toHaveLength(1)
    await Promise.all([paused.stop(), other.stop(), served.stop()])
  }, 90_000)

  it('retries the completion until a restarted coordinator takes it', async () => {
    // Leases longer than the outage: the worker's own attempt must be the one that completes.
    coordinator = await startCoordinator(suite.db.url ?? '', undefined, 60_000)
    const marker = join(suite.scratch, 'restart.marker')
    const agent = `echo started >> ${JSON.stringify(marker)}; sleep 1; echo finished >> ${JSON.stringify(marker)}`
    await register(coordinator.url, { name: 'e2e-restart', agent: { command: ['sh', '-c', agent] } })
    const worker = spawnWorker(coordinator.url, { workdir: join(suite.scratch, 'w3'), id: 'steady' })
    const id = await dispatch(coordinator.url, 'e2e-restart', { repo: suite.repo })
    await waitFor(async () => (await lines(marker)).includes('started'), {
      timeoutMs: 30_000,
      everyMs: 100,
      what: worker.output,
    })
    const port = Number(new URL(coordinator.url).port)
    await coordinator.stop('SIGKILL')
    // The agent finishes while no coordinator answers: the completion has to wait for the restart.
    await waitFor(async () => (await lines(marker)).includes('finished'), { timeoutMs: 30_000, everyMs: 100 })
    await new Promise((r) => setTimeout(r, 500))
    coordinator = await startCoordinator(suite.db.url ?? '', port, 60_000)
    const d = await waitForStatus(coordinator.url, id, 45_000, [worker, coordinator])
    expect(d).toMatchObject({ status: 'succeeded', attempt: 1, completion: { exitCode: 0 } })
    expect(await reportsOf(coordinator.url, id, 'e2e-restart')).toEqual([1])
    await Promise.all([worker.stop(), coordinator.stop()])
  }, 90_000)

  it('gives up retrying a completion once its grace period after SIGTERM is over', async () => {
    coordinator = await startCoordinator(suite.db.url ?? '', undefined, 60_000)
    const marker = join(suite.scratch, 'orphaned.marker')
    const agent = `echo started >> ${JSON.stringify(marker)}; sleep 0.5; echo finished >> ${JSON.stringify(marker)}`
    await register(coordinator.url, { name: 'e2e-orphaned', agent: { command: ['sh', '-c', agent] } })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w6'),
      args: ['--grace-ms', '300'],
    })
    await dispatch(coordinator.url, 'e2e-orphaned', { repo: suite.repo })
    await waitFor(async () => (await lines(marker)).includes('started'), {
      timeoutMs: 30_000,
      everyMs: 100,
      what: worker.output,
    })
    await coordinator.stop('SIGKILL')
    // The completion now retries against nobody; the stop must not wait for its whole retry budget.
    await waitFor(async () => (await lines(marker)).includes('finished'), { timeoutMs: 30_000, everyMs: 100 })
    worker.child.kill('SIGTERM')
    expect(await worker.exited).toBe(0)
  }, 60_000)
})
