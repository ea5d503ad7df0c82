// End to end: `preflight worker --label` sends its labels on every claim, and a labelled dispatch goes
// only to a worker that has them all.
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  call,
  dispatch,
  e2eSuite,
  getDispatch,
  register,
  serveCoordinator,
  spawnWorker,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'

const suite = e2eSuite()
let coordinator: { url: string }

beforeAll(async () => {
  coordinator = await serveCoordinator(suite)
})

describe('labels', () => {
  it('a labelled dispatch is claimed only by a worker with its labels', async () => {
    await register(coordinator.url, { name: 'labelled', agent: { command: ['true'] } })
    const body = { subagent: 'labelled', workspace: { repo: suite.repo }, labels: ['gpu=yes'] }
    const labelled = (
      await call<{ id: string }>(coordinator.url, 'POST', '/v1/dispatches', TOKENS.orchestrator, body)
    ).id
    // newer than the labelled one: a worker that could take both takes the older first
    const plainJob = await dispatch(coordinator.url, 'labelled', { repo: suite.repo })
    const plain = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'plain'),
      id: 'plain',
      args: ['--max-dispatches', '1'],
    })
    expect((await waitForStatus(coordinator.url, plainJob, 30_000, [plain])).status).toBe('succeeded')
    expect(await plain.exited).toBe(0)
    expect((await getDispatch(coordinator.url, labelled)).status).toBe('queued')
    const gpu = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'gpu'),
      id: 'gpu',
      args: ['--label', 'gpu=yes', '--label', 'os=linux', '--max-dispatches', '1'],
    })
    const done = await waitForStatus(coordinator.url, labelled, 30_000, [gpu])
    expect(done.status).toBe('succeeded')
    expect(done.preflight).toMatchObject({ worker: { id: 'gpu' } })
  }, 90_000)
})
