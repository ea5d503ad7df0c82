// End to end, with a real coordinator and worker: a high-priority dispatch created last is claimed first;
// an orchestrator waits for the end with the long-poll and follows the events over server-sent events.
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/index.js'
import {
  call,
  e2eSuite,
  getDispatch,
  register,
  serveCoordinator,
  spawnWorker,
  TOKENS,
} from '../support/e2e.js'

const suite = e2eSuite()
let coordinator: { url: string }

beforeAll(async () => {
  coordinator = await serveCoordinator(suite)
})

const create = async (priority: number, metadata: Record<string, string>) =>
  (
    await call<{ id: string }>(coordinator.url, 'POST', '/v1/dispatches', TOKENS.orchestrator, {
      subagent: 'prioritised',
      workspace: { repo: suite.repo },
      priority,
      metadata,
    })
  ).id

// The events of one dispatch as the SSE stream sends them, until `end`.
async function streamSteps(id: string): Promise<{ steps: string[]; ids: number[] }> {
  const res = await fetch(`${coordinator.url}/v1/dispatches/${id}/events`, {
    headers: { authorization: `Bearer ${TOKENS.orchestrator}` },
  })
  expect(res.status).toBe(200)
  const text = await res.text() // the stream closes after `end`
  const frames = text.split('\n\n').filter((f) => f.trim() !== '' && !f.startsWith(':'))
  const steps: string[] = []
  const ids: number[] = []
  for (const frame of frames) {
    const field = (name: string) =>
      frame
        .split('\n')
        .find((l) => l.startsWith(`${name}: `))
        ?.slice(name.length + 2)
    const data = JSON.parse(field('data') ?? '{}')
    if (field('event') === 'end') steps.push(`end:${data.status}`)
    else {
      steps.push(data.step)
      ids.push(Number(field('id')))
    }
  }
  return { steps, ids }
}

describe('priority, waiting and the event stream', () => {
  it('claims the high-priority dispatch created last first; waits and streams to the end', async () => {
    await register(coordinator.url, { name: 'prioritised', agent: { command: ['true'] } })
    const low = await create(-10, { task: 'low' })
    const normal = await create(0, { task: 'normal' })
    const high = await create(50, { task: 'high' })
    // followed from before any worker runs: every step arrives, in order, and the stream ends
    const streamed = streamSteps(high)
    const client = createClient({ url: coordinator.url, token: TOKENS.orchestrator })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'one'),
      id: 'one',
      args: ['--max-dispatches', '3'],
    })
    const ended = await Promise.all(
      [high, normal, low].map((id) => client.waitForDispatch(id, { timeoutMs: 60_000 })),
    )
    expect(ended.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
    expect(await worker.exited).toBe(0)
    // one worker, one at a time: the order of the claims is the order of their claimed events
    const claimedAt = async (id: string) =>
      (await getDispatch(coordinator.url, id)).events.find((e) => e.step === 'claimed')?.at ?? ''
    const order = await Promise.all([high, normal, low].map(claimedAt))
    expect([...order].sort()).toEqual(order)
    const { steps, ids } = await streamed
    expect(steps[0]).toBe('created')
    expect(steps).toContain('claimed')
    expect(steps.at(-2)).toBe('completed')
    expect(steps.at(-1)).toBe('end:succeeded')
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    const view = await getDispatch(coordinator.url, high)
    expect(steps.slice(0, -1)).toEqual(view.events.map((e) => e.step))
    // found by the orchestrator's reference
    const found = await call<{ items: { id: string }[] }>(
      coordinator.url,
      'GET',
      '/v1/dispatches?metadata.task=high',
      TOKENS.operator,
    )
    expect(found.items.map((i) => i.id)).toEqual([high])
  }, 90_000)
})
