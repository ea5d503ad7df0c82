// Stopping worker containers as an engine or an operator does: `docker stop` (SIGTERM to tini, which
// forwards it) and `docker kill` (SIGKILL to the whole container).
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { containerStack, inspect, kill, outputOf, settled, spawnWorker } from '../support/containers.js'
import { dispatch, register, stepsOf } from '../support/e2e.js'
import { waitFor } from '../support/wait.js'

const stack = containerStack()
const inOutbox = (name: string) => join(stack.outbox, name)

describe('a busy worker container', () => {
  it('on docker stop lets the running agent finish within the grace period, then exits 0', async () => {
    const worker = await spawnWorker(stack)
    await register(stack.url, {
      name: 'ct-stop',
      agent: { command: ['sh', '-c', 'touch /outbox/in/stop-began; sleep 4; touch /outbox/in/stop-ended'] },
    })
    const id = await dispatch(stack.url, 'ct-stop', { repo: stack.repo })
    await waitFor(async () => existsSync(inOutbox('stop-began')), {
      timeoutMs: 60_000,
      everyMs: 100,
      what: () => outputOf(worker),
    })
    const began = Date.now()
    // docker stop -t 60: SIGTERM, then SIGKILL after 60 s (compose.yaml gives 120 s)
    await worker.stop({ timeout: 60_000, remove: false })
    expect(Date.now() - began).toBeLessThan(30_000)
    const { State } = await inspect(worker)
    expect({ exit: State.ExitCode, oom: State.OOMKilled }).toEqual({ exit: 0, oom: false })
    expect(existsSync(inOutbox('stop-ended'))).toBe(true)
    expect(await settled(stack, id)).toMatchObject({ status: 'succeeded', attempt: 1 })
  })

  it('on docker kill loses its lease, and another worker container completes the dispatch', async () => {
    const first = await spawnWorker(stack)
    await register(stack.url, {
      name: 'ct-kill',
      agent: { command: ['sh', '-c', 'echo run >> /outbox/in/kill-runs; sleep 3'] },
    })
    const id = await dispatch(stack.url, 'ct-kill', { repo: stack.repo })
    await waitFor(async () => existsSync(inOutbox('kill-runs')), {
      timeoutMs: 60_000,
      everyMs: 100,
      what: () => outputOf(first),
    })
    await kill(first)
    expect((await inspect(first)).State).toMatchObject({ Running: false, ExitCode: 137 })
    await spawnWorker(stack)
    const done = await settled(stack, id)
    expect(done).toMatchObject({ status: 'succeeded', attempt: 2 })
    expect(stepsOf(done, 1)).not.toContain('complete')
    expect(done.events.map((e) => e.step)).toContain('lease-expired')
    expect((await readFile(inOutbox('kill-runs'), 'utf8')).split('\n').filter(Boolean)).toHaveLength(2)
  })
})
