// GET /v1/dispatches/{id}/events: one dispatch's events as server-sent events, oldest first, each with
// its event id as the SSE `id` (a client that reconnects sends it back as Last-Event-ID and goes on
// after it), then `event: end` once the dispatch has reached its final status. Bounded: streams open at
// once per coordinator, a keep-alive comment when nothing was sent for a while, a longest life (the
// stream then closes without `end`: the client reconnects and resumes).
import { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { type SSEStreamingApi, streamSSE } from 'hono/streaming'
import { DispatchId, FINAL_STATUSES } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { eventsAfter } from '../db/events.js'
import { countdown } from '../dispatch/long-poll.js'
import { ApiError, ErrorCode, notFound } from '../http/errors.js'
import { type AppEnv, authedRoute, errorResponse } from '../http/http.js'

// Events read (and sent) per statement.
const BATCH = 100

export const streamRoute = authedRoute(['orchestrator', 'operator'], {
  method: 'get',
  path: '/v1/dispatches/{id}/events',
  tags: ['dispatches'],
  operationId: 'streamDispatchEvents',
  summary: 'The dispatch’s events as server-sent events, until it has ended; resumes after Last-Event-ID',
  request: {
    params: DispatchId,
    headers: z.object({
      'last-event-id': z
        .string()
        .regex(/^[0-9]{1,15}$/, 'Last-Event-ID is the id of an event this stream sent')
        .optional()
        .describe('the `id` of the last event received: the stream goes on after it'),
    }),
  },
  responses: {
    200: {
      content: { 'text/event-stream': { schema: z.string() } },
      description:
        'each event as `id: <event id>` and `data: {"id","step","at","attempt","detail"?}`; `event: end` with `{"status"}` once the dispatch has ended, then the stream closes',
    },
    404: errorResponse('no such dispatch (code not-found)'),
    429: errorResponse(
      'the token holds its limit of event streams on this coordinator (code concurrency-limit); see Retry-After',
    ),
  },
})
// Streams open on each coordinator (its Deps).
const open = new WeakMap<Deps, number>()

// The route's handler: the dispatch's first events read (404 when there is none), a place among the
// coordinator's streams taken (503 when none is left) and one of the token's (429), then the stream.
export async function openEventStream(
  deps: Deps,
  c: Context<AppEnv>,
  id: string,
  after: number,
): Promise<Response> {
  const first = await eventsAfter(deps.db.orm, id, after, BATCH)
  if (!first) throw notFound(`dispatch ${id}`)
  const { max, keepAliveMs, maxDurationMs } = deps.config.eventStreams
  const streams = open.get(deps) ?? 0
  if (streams >= max)
    throw new ApiError(
      503,
      ErrorCode.Unavailable,
      `this coordinator serves ${max} event streams already; try again shortly`,
    )
  const release = deps.streams.take(c.get('tokenId'))
  open.set(deps, streams + 1)
  return streamSSE(c, async (stream) => {
    const stop = new AbortController()
    const end = () => stop.abort()
    stream.onAbort(end)
    c.req.raw.signal.addEventListener('abort', end, { once: true })
    const timer = setTimeout(end, maxDurationMs)
    try {
      await pump(deps, stream, id, { after, first, keepAliveMs }, stop.signal)
    } finally {
      clearTimeout(timer)
      c.req.raw.signal.removeEventListener('abort', end)
      open.set(deps, (open.get(deps) ?? 1) - 1)
      release()
    }
  })
}

type Page = NonNullable<Awaited<ReturnType<typeof eventsAfter>>>

async function pump(
  deps: Deps,
  stream: SSEStreamingApi,
  id: string,
  opts: { after: number; first: Page; keepAliveMs: number },
  signal: AbortSignal,
): Promise<void> {
  let last = opts.after
  let page: Page | undefined = opts.first
  // the time left until a keep-alive is due: restarted by every write
  let quiet = countdown(deps.clock, opts.keepAliveMs)
  while (page && !signal.aborted) {
    for (const event of page.events) {
      await stream.writeSSE({ id: String(event.id), data: JSON.stringify(event) })
      last = event.id
      quiet = countdown(deps.clock, opts.keepAliveMs)
    }
    if (page.events.length < BATCH) {
      // read with the events: a final status here comes after every event it had
      if (FINAL_STATUSES.has(page.status)) {
        await stream.writeSSE({ event: 'end', data: JSON.stringify({ status: page.status }) })
        return
      }
      if (deps.watch.isClosed) return
      await deps.watch.wait(id, last, Math.max(0, quiet()), signal)
      if (signal.aborted || deps.watch.isClosed) return
      if (quiet() <= 0) {
        await stream.write(': keep-alive\n\n')
        quiet = countdown(deps.clock, opts.keepAliveMs)
      }
    }
    page = await eventsAfter(deps.db.orm, id, last, BATCH)
  }
}
