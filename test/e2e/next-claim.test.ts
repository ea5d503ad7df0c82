// End to end: a worker without --agent-uid asks for its next dispatch with each completion (`next`), so
// a queue of dispatches costs one claim request, not one each; --max-dispatches still bounds what it takes.
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  dispatch,
  e2eSuite,
  getDispatch,
  register,
  serveCoordinator,
  spawnWorker,
  waitForStatus,
} from '../support/e2e.js'

const suite = e2eSuite()
let coordinator: { url: string }

beforeAll(async () => {
  coordinator = await serveCoordinator(suite)
})

describe('the next dispatch claimed with a completion', () => {
  it('runs a queue of three with one claim request, and takes no more than --max-dispatches', async () => {
    await register(coordinator.url, { name: 'queued-work', agent: { command: ['true'] } })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push(await dispatch(coordinator.url, 'queued-work', { repo: suite.repo }))
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'next'),
      id: 'next-worker',
      args: ['--max-dispatches', '3'],
    })
    for (const id of ids.slice(0, 3))
      expect((await waitForStatus(coordinator.url, id, 30_000, [worker])).status).toBe('succeeded')
    expect(await worker.exited).toBe(0)
    const claims = worker.records().filter((r) => r.msg === 'claimed dispatch')
    expect(claims.map((r) => r.with)).toEqual([undefined, 'completion', 'completion'])
    // the third completion did not ask: the fourth dispatch was never claimed
    expect(await getDispatch(coordinator.url, ids[3] as string)).toMatchObject({
      status: 'queued',
      attempt: 0,
    })
  }, 90_000)
})
