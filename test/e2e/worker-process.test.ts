// End to end: the worker process's graceful stop and what it leaves in its workdir.
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { WORKER_FLUSH_MS } from '../../src/cli/commands.js'
import {
  call,
  dispatch,
  e2eSuite,
  getDispatch,
  readStalled,
  register,
  serveCoordinator,
  spawnWorker,
  stepsOf,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'
import { diesWithin } from '../support/git-fixtures.js'
import { waitFor } from '../support/wait.js'

const suite = e2eSuite()
let coordinator: { url: string }

beforeAll(async () => {
  coordinator = await serveCoordinator(suite, 60_000)
})

// Writes its pid, then sleeps; `done` marks a run that finished.
function sleepingAgent(marker: string, seconds: number): string[] {
  const m = JSON.stringify(marker)
  return ['sh', '-c', `echo $$ > ${m}; sleep ${seconds}; echo done >> ${m}.done`]
}

describe('worker process', () => {
  it('on SIGTERM stops claiming and lets the running dispatch finish within the grace period', async () => {
    const marker = join(suite.scratch, 'graceful.marker')
    await register(coordinator.url, { name: 'e2e-graceful', agent: { command: sleepingAgent(marker, 1) } })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w1'),
      args: ['--grace-ms', '30000'],
    })
    const running = await dispatch(coordinator.url, 'e2e-graceful', { repo: suite.repo })
    await waitFor(async () => existsSync(marker), { timeoutMs: 30_000, everyMs: 100, what: worker.output })
    worker.child.kill('SIGTERM')
    const queued = await dispatch(coordinator.url, 'e2e-graceful', { repo: suite.repo })
    expect(await worker.exited).toBe(0)
    expect((await getDispatch(coordinator.url, running)).status).toBe('succeeded')
    expect((await getDispatch(coordinator.url, queued)).status).toBe('queued')
    await call(coordinator.url, 'POST', `/v1/dispatches/${queued}/cancel`, TOKENS.orchestrator)
  }, 60_000)

  // A log driver that stalls: up to 8 MiB of output records wait on the pipe, which kept the event loop,
  // and so the worker, alive after it stopped (60 s and counting, until the pipe was read).
  it('on SIGTERM exits 0 within its flush bound though nobody reads its stdout and output waits on it', async () => {
    await register(coordinator.url, { name: 'e2e-chatty', agent: { command: ['seq', '200000'] } })
    const worker = spawnWorker(coordinator.url, { workdir: join(suite.scratch, 'w11'), stallStdout: true })
    const id = await dispatch(coordinator.url, 'e2e-chatty', { repo: suite.repo })
    const d = await waitForStatus(coordinator.url, id, 60_000, [worker])
    // the log had no room for every line: its bound of pending output was reached
    expect(d).toMatchObject({ status: 'succeeded', completion: { outputDropped: expect.any(Number) } })
    const signalled = performance.now()
    worker.child.kill('SIGTERM')
    expect(await worker.exited).toBe(0)
    // the stop itself takes milliseconds here (no dispatch runs); the rest is slack for a loaded machine
    expect(performance.now() - signalled).toBeLessThan(WORKER_FLUSH_MS + 3_000)
  }, 90_000)

  // The bound cuts off a stuck reader only: output that waited is still written to one that reads again.
  it('on SIGTERM still writes the output that waits on its stdout to a reader that comes back within the bound', async () => {
    await register(coordinator.url, { name: 'e2e-chatty-late', agent: { command: ['seq', '200000'] } })
    const worker = spawnWorker(coordinator.url, { workdir: join(suite.scratch, 'w12'), stallStdout: true })
    const id = await dispatch(coordinator.url, 'e2e-chatty-late', { repo: suite.repo })
    const d = await waitForStatus(coordinator.url, id, 60_000, [worker])
    expect(d).toMatchObject({ status: 'succeeded', completion: { outputDropped: expect.any(Number) } })
    worker.child.kill('SIGTERM')
    const records = readStalled(worker)
    expect(await worker.exited).toBe(0)
    // the counts are the dispatch's (one written before a line that found room again, when the stalled
    // pipe drained a little on a loaded machine), the last when its output ended, behind everything that
    // waited: all of them reach the reader, and add up to what the completion says
    const counted = records().filter((r) => r.dispatchId === id && r.dropped !== undefined)
    expect(counted.length).toBeGreaterThan(0)
    expect(counted.reduce((sum, r) => sum + Number(r.dropped), 0)).toBe(d.completion?.outputDropped)
  }, 90_000)

  it('after the grace period stops the agent and leaves the dispatch uncompleted for its lease to expire', async () => {
    const marker = join(suite.scratch, 'impatient.marker')
    await register(coordinator.url, { name: 'e2e-impatient', agent: { command: sleepingAgent(marker, 60) } })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w2'),
      args: ['--grace-ms', '200'],
    })
    const id = await dispatch(coordinator.url, 'e2e-impatient', { repo: suite.repo })
    await waitFor(async () => existsSync(marker), { timeoutMs: 30_000, everyMs: 100, what: worker.output })
    const pid = Number((await readFile(marker, 'utf8')).trim())
    worker.child.kill('SIGTERM')
    expect(await worker.exited).toBe(0)
    const d = await getDispatch(coordinator.url, id)
    expect(d).toMatchObject({ status: 'running', attempt: 1 })
    expect(d.completion).toBeUndefined()
    expect(await diesWithin(pid)).toBe(true)
  }, 60_000)

  it('stops an agent past --agent-timeout-ms and completes the dispatch as failed', async () => {
    const marker = join(suite.scratch, 'slow.marker')
    await register(coordinator.url, { name: 'e2e-slow', agent: { command: sleepingAgent(marker, 60) } })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w8'),
      args: ['--agent-timeout-ms', '1500'],
    })
    const id = await dispatch(coordinator.url, 'e2e-slow', { repo: suite.repo })
    const d = await waitForStatus(coordinator.url, id, 30_000, [worker])
    await worker.stop()
    // sh got SIGTERM: 128 + 15
    expect(d).toMatchObject({ status: 'failed', attempt: 1, completion: { exitCode: 143 } })
    expect(stepsOf(d)).toEqual([
      'claimed',
      'prepare',
      'setup',
      'verify',
      'report',
      'preflight',
      'baseline',
      'agent',
      'agent-timeout',
      'completed',
    ])
    expect(d.events.find((e) => e.step === 'agent-timeout')?.detail).toEqual({
      timeoutMs: 1500,
      exitCode: 143,
    })
    expect(await diesWithin(Number((await readFile(marker, 'utf8')).trim()))).toBe(true)
    expect(existsSync(`${marker}.done`)).toBe(false)
  }, 60_000)

  it('completes a timed-out agent that exits 0 on SIGTERM as failed (124), never as succeeded', async () => {
    const command = ['sh', '-c', "trap 'exit 0' TERM; sleep 60 & wait"]
    await register(coordinator.url, { name: 'e2e-slow-polite', agent: { command } })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w10'),
      args: ['--agent-timeout-ms', '1000'],
    })
    const id = await dispatch(coordinator.url, 'e2e-slow-polite', { repo: suite.repo })
    const d = await waitForStatus(coordinator.url, id, 30_000, [worker])
    await worker.stop()
    expect(d).toMatchObject({ status: 'failed', completion: { exitCode: 124 } })
    expect(d.events.find((e) => e.step === 'agent-timeout')?.detail).toEqual({
      timeoutMs: 1000,
      exitCode: 124,
    })
  }, 60_000)

  it('runs up to --concurrency dispatches at once', async () => {
    // Each agent waits for the other to have started: both succeed only when they run side by side.
    const a = join(suite.scratch, 'side-a')
    const b = join(suite.scratch, 'side-b')
    const barrier = (mine: string, theirs: string) => [
      'sh',
      '-c',
      `touch ${mine}; i=0; while [ ! -e ${theirs} ]; do i=$((i+1)); [ $i -gt 200 ] && exit 9; sleep 0.1; done`,
    ]
    await register(coordinator.url, { name: 'e2e-side-a', agent: { command: barrier(a, b) } })
    await register(coordinator.url, { name: 'e2e-side-b', agent: { command: barrier(b, a) } })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w4'),
      args: ['--concurrency', '2'],
    })
    const ids = [
      await dispatch(coordinator.url, 'e2e-side-a', { repo: suite.repo }),
      await dispatch(coordinator.url, 'e2e-side-b', { repo: suite.repo }),
    ]
    const done = await Promise.all(ids.map((id) => waitForStatus(coordinator.url, id, 45_000, [worker])))
    expect(done.map((d) => d.status)).toEqual(['succeeded', 'succeeded'])
    await worker.stop()
  }, 60_000)

  it('with --max-dispatches 1 runs one dispatch, then exits 0 and leaves the rest queued', async () => {
    await register(coordinator.url, { name: 'e2e-once', agent: { command: ['true'] } })
    const first = await dispatch(coordinator.url, 'e2e-once', { repo: suite.repo })
    const second = await dispatch(coordinator.url, 'e2e-once', { repo: suite.repo })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w9'),
      args: ['--max-dispatches', '1', '--concurrency', '2'],
    })
    expect(await worker.exited).toBe(0)
    const views = await Promise.all([first, second].map((id) => getDispatch(coordinator.url, id)))
    expect(views.map((d) => d.status).sort()).toEqual(['queued', 'succeeded'])
    const queued = [first, second][views.findIndex((d) => d.status === 'queued')]
    await call(coordinator.url, 'POST', `/v1/dispatches/${queued}/cancel`, TOKENS.orchestrator)
  }, 60_000)

  it('exits 1 when the coordinator refuses its token', async () => {
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'w5'),
      env: { PREFLIGHT_TOKEN: 'not-a-token-of-this-coordinator' },
    })
    expect(await worker.exited).toBe(1)
  }, 30_000)

  it('refuses a local repository as repo-not-allowed when started without --allow-local-repos', async () => {
    const workdir = join(suite.scratch, 'w7')
    await register(coordinator.url, { name: 'e2e-local-repo', agent: { command: ['true'] } })
    const worker = spawnWorker(coordinator.url, { workdir, allowLocalRepos: false })
    const id = await dispatch(coordinator.url, 'e2e-local-repo', { repo: suite.repo })
    const d = await waitForStatus(coordinator.url, id, 30_000, [worker])
    expect(d).toMatchObject({ status: 'setup_failed', completion: { reason: 'repo-not-allowed' } })
    await worker.stop()
    expect(await readdir(workdir)).toEqual([])
  }, 60_000)

  it('removes the directory of a clone that failed half-way', async () => {
    const workdir = join(suite.scratch, 'w6')
    await register(coordinator.url, { name: 'e2e-badref', agent: { command: ['true'] } })
    const worker = spawnWorker(coordinator.url, { workdir })
    const id = await dispatch(coordinator.url, 'e2e-badref', { repo: suite.repo, ref: 'no-such-branch' })
    const d = await waitForStatus(coordinator.url, id, 30_000, [worker])
    expect(d).toMatchObject({ status: 'setup_failed', completion: { reason: 'ref-not-found' } })
    await worker.stop()
    expect(await readdir(workdir)).toEqual([])
  }, 60_000)

  it('removes a finished workspace and keeps a failed one with --keep-failed', async () => {
    const workdir = join(suite.scratch, 'w3')
    await register(coordinator.url, { name: 'e2e-ok', agent: { command: ['true'] } })
    await register(coordinator.url, {
      name: 'e2e-bad',
      agent: { command: ['true'] },
      contextRequires: { paths: ['nope'] },
    })
    const worker = spawnWorker(coordinator.url, { workdir, args: ['--keep-failed'] })
    const ok = await dispatch(coordinator.url, 'e2e-ok', { repo: suite.repo })
    const bad = await dispatch(coordinator.url, 'e2e-bad', { repo: suite.repo })
    expect((await waitForStatus(coordinator.url, ok, 30_000, [worker])).status).toBe('succeeded')
    expect((await waitForStatus(coordinator.url, bad, 30_000, [worker])).status).toBe('preflight_failed')
    await worker.stop()
    expect(await readdir(workdir)).toEqual([`${bad}-1`])
  }, 60_000)
})
