// End to end: an agent that prints without end, to a worker whose stdout nobody reads, does not fill
// the worker's memory, and its dispatch completes.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  type Coordinator,
  dispatch,
  e2eSuite,
  register,
  startCoordinator,
  startWorker,
  waitForStatus,
} from './support.js'

const suite = e2eSuite()
let coordinator: Coordinator

beforeAll(async () => {
  coordinator = await startCoordinator(suite.db.url ?? '')
})

function rssMb(pid: number): number {
  const kb = /^VmRSS:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb ?? 0) / 1024
}

describe('an output flood', () => {
  it('1 GiB of agent output into a stalled stdout keeps the worker under 200 MB', async () => {
    // 1 GiB in lines of 1,000 characters
    const flood = 'yes "$(head -c 999 /dev/zero | tr "\\0" x)" | head -c 1073741824'
    await register(coordinator.url, { name: 'flood', agent: { command: ['sh', '-c', flood] } })
    const worker = startWorker(coordinator.url, {
      workdir: join(suite.scratch, 'flood'),
      stallStdout: true,
      args: ['--max-dispatches', '1'],
    })
    const id = await dispatch(coordinator.url, 'flood', { repo: suite.repo })
    let peak = 0
    const sampler = setInterval(() => {
      if (worker.child.pid) peak = Math.max(peak, rssMb(worker.child.pid))
    }, 100)
    try {
      const done = await waitForStatus(coordinator.url, id, 120_000, [worker])
      expect(done).toMatchObject({ status: 'succeeded', completion: { exitCode: 0 } })
    } finally {
      clearInterval(sampler)
    }
    console.log(`worker RSS peak under a 1 GiB output flood: ${peak.toFixed(0)} MB`)
    expect(peak).toBeGreaterThan(0)
    expect(peak).toBeLessThan(200)
  }, 150_000)
})
