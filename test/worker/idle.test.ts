// --exit-when-idle, on a real worker process and a coordinator: a Job's pod (KEDA's ScaledJob) that finds
// nothing to claim ends by itself, and one that found a dispatch runs it whole first.
import { describe, expect, it } from 'vitest'
import { runRefused } from '../support/cli.js'
import {
  dispatch,
  e2eSuite,
  fakeAgent,
  markerIn,
  register,
  serveCoordinator,
  spawnWorker,
  waitForStatus,
} from '../support/e2e.js'

const suite = e2eSuite()

describe('preflight worker --exit-when-idle', () => {
  it('exits 0 once nothing was claimed for that long, without waiting out its long-poll', async () => {
    const { url } = await serveCoordinator(suite)
    const worker = spawnWorker(url, {
      workdir: `${suite.scratch}/w1`,
      args: ['--exit-when-idle', '1s', '--wait-ms', '60000'],
    })
    const startedAt = Date.now()
    expect(await worker.exited).toBe(0)
    // the process's own start-up included; a claim that waited its 30 s (the coordinator's cap) would not fit
    expect(Date.now() - startedAt).toBeLessThan(15_000)
    expect(worker.records()).toContainEqual(expect.objectContaining({ idleMs: 1000 }))
  })

  it('runs the dispatch it claimed to its end, counting idle time from there', async () => {
    const { url } = await serveCoordinator(suite)
    // the agent runs 3 s, longer than the idle time: a running dispatch is not idleness
    await register(url, { name: 'slow', agent: { command: fakeAgent(markerIn(suite.scratch), 3) } })
    const id = await dispatch(url, 'slow', { repo: suite.repo })
    const worker = spawnWorker(url, { workdir: `${suite.scratch}/w2`, args: ['--exit-when-idle', '2s'] })
    expect(await worker.exited).toBe(0)
    expect((await waitForStatus(url, id)).status).toBe('succeeded')
  })

  it('refuses more than one slot with exit 2', async () => {
    const args = [
      'worker',
      '--coordinator',
      'http://127.0.0.1:1',
      '--exit-when-idle',
      '1s',
      '--concurrency',
      '2',
    ]
    expect(await runRefused(args, { PREFLIGHT_TOKEN: 'worker-token-0123456789' })).toEqual({
      code: 2,
      stderr: 'preflight: --exit-when-idle takes --concurrency 1: one dispatch per pod\n',
    })
  })
})
