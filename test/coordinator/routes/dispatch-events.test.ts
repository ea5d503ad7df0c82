// GET /v1/dispatches/{id}/events: the dispatch's events as server-sent events, in order, each with its id;
// a reconnect with Last-Event-ID goes on after it (no duplicate, no gap); `end` once the dispatch ended.
// Bounded: streams per coordinator, keep-alive comments, a longest life.
import { describe, expect, it } from 'vitest'
import { type TestApp, tokens, useTestApp } from '../../support/app.js'
import { exited } from '../../support/dispatch-states.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'
import { waitFor } from '../../support/wait.js'

interface Frame {
  id?: string
  event?: string
  data?: string
  comment?: string
}

// An open stream: its frames as they come, read one at a time.
async function open(h: TestApp, id: string, lastEventId?: string) {
  const stop = new AbortController()
  const headers: Record<string, string> = { authorization: `Bearer ${tokens.operator}` }
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
  const res = await h.app.request(`/v1/dispatches/${id}/events`, { headers, signal: stop.signal })
  const reader = res.body?.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  const frames: Frame[] = []
  let ended = false
  // the next frame, or undefined once the stream has closed
  async function next(): Promise<Frame | undefined> {
    for (;;) {
      const at = buffered.indexOf('\n\n')
      if (at >= 0) {
        const frame: Frame = {}
        for (const line of buffered.slice(0, at).split('\n')) {
          if (line.startsWith(':')) frame.comment = line.slice(1).trim()
          else {
            const [field, ...rest] = line.split(': ')
            frame[field as 'id' | 'event' | 'data'] = rest.join(': ')
          }
        }
        buffered = buffered.slice(at + 2)
        frames.push(frame)
        return frame
      }
      const chunk = await reader?.read()
      if (!chunk || chunk.done) {
        ended = true
        return undefined
      }
      buffered += decoder.decode(chunk.value, { stream: true })
    }
  }
  // the next event frames (comments passed over)
  async function events(n: number): Promise<Frame[]> {
    const got: Frame[] = []
    while (got.length < n) {
      const f = await next()
      if (!f) break
      if (f.comment === undefined) got.push(f)
    }
    return got
  }
  async function rest(): Promise<Frame[]> {
    const got: Frame[] = []
    for (let f = await next(); f; f = await next()) if (f.comment === undefined) got.push(f)
    return got
  }
  const close = async () => {
    stop.abort()
    await reader?.cancel().catch(() => {})
  }
  return { res, next, events, rest, close, frames, isEnded: () => ended }
}

const steps = (frames: Frame[]) =>
  frames.map((f) =>
    f.event === 'end' ? `end:${JSON.parse(f.data ?? '{}').status}` : JSON.parse(f.data ?? '{}').step,
  )

describe('GET /v1/dispatches/{id}/events', () => {
  const h = useTestApp({
    watchPollMs: 60_000,
    eventStreams: { max: 2, keepAliveMs: 150, maxDurationMs: 2_000 },
  })

  it('streams an ended dispatch’s events in order, each with its id, then end, and closes', async () => {
    const { id } = await exited(h, 0)
    const s = await open(h, id)
    expect(s.res.status).toBe(200)
    expect(s.res.headers.get('content-type')).toBe('text/event-stream')
    const frames = await s.rest()
    expect(steps(frames)).toEqual(['created', 'claimed', 'preflight', 'completed', 'end:succeeded'])
    const ids = frames.slice(0, -1).map((f) => Number(f.id))
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(ids.length)
    // each event's data: the event as GET /v1/dispatches/{id} shows it, with its id
    expect(JSON.parse(frames[3]?.data ?? '')).toMatchObject({ id: ids[3], step: 'completed', attempt: 1 })
    expect(frames.at(-1)?.id).toBeUndefined()
    expect(s.isEnded()).toBe(true)
  })

  it('sends the events as they happen and ends when the dispatch does', async () => {
    const id = await queueDispatch(h)
    const s = await open(h, id)
    expect(steps(await s.events(1))).toEqual(['created'])
    const c = await claim(h)
    expect(steps(await s.events(1))).toEqual(['claimed'])
    const fence = fenceOf(c)
    await h.call('POST', `/v1/dispatches/${id}/events`, { role: 'worker', body: { ...fence, step: 'setup' } })
    expect(steps(await s.events(1))).toEqual(['setup'])
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fence, report: reportFor(definition(), 'unmet') },
    })
    expect(steps(await s.rest())).toEqual(['preflight', 'end:preflight_failed'])
  })

  it('resumes after Last-Event-ID without duplicates or gaps', async () => {
    const { id } = await exited(h, 2)
    const whole = await (await open(h, id)).rest()
    const first = await open(h, id)
    const head = await first.events(2)
    await first.close()
    const second = await open(h, id, head[1]?.id)
    const tail = await second.rest()
    expect([...head, ...tail].map((f) => f.id)).toEqual(whole.map((f) => f.id))
    expect(steps([...head, ...tail])).toEqual(steps(whole))
    // resuming after the last event: only the end
    expect(steps(await (await open(h, id, whole.at(-2)?.id)).rest())).toEqual(['end:failed'])
  })

  it('keeps an idle stream alive with comments, and closes it at its longest life without end', async () => {
    const id = await queueDispatch(h)
    const s = await open(h, id)
    const started = Date.now()
    const frames = await s.rest()
    expect(steps(frames)).toEqual(['created'])
    expect(s.frames.filter((f) => f.comment === 'keep-alive').length).toBeGreaterThanOrEqual(3)
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900)
    expect(Date.now() - started).toBeLessThan(4_000)
  })

  it('serves at most the configured streams at once: beyond, 503 unavailable', async () => {
    const id = await queueDispatch(h)
    const a = await open(h, id)
    const b = await open(h, id)
    const c = await open(h, id)
    expect([a.res.status, b.res.status]).toEqual([200, 200])
    expect(c.res.status).toBe(503)
    expect(c.res.headers.get('retry-after')).toBe('1')
    await a.close()
    await b.close()
    // a closed stream gives its place back
    await waitFor(
      async () => {
        const d = await open(h, id)
        await d.close()
        return d.res.status === 200
      },
      { what: 'a stream to be served again' },
    )
  })

  it('is 404 for no such dispatch, 400 for a Last-Event-ID it did not send', async () => {
    expect((await open(h, '00000000-0000-4000-8000-000000000000')).res.status).toBe(404)
    const id = await queueDispatch(h)
    const bad = await open(h, id, 'abc')
    expect(bad.res.status).toBe(400)
  })
})
