// POST /v1/dispatches, GET /v1/dispatches (the listing), GET /v1/dispatches/endings (long-poll),
// GET /v1/dispatches/{id} (a long-poll with waitFor=terminal), GET /v1/dispatches/{id}/events (its
// events as server-sent events), POST /v1/dispatches/{id}/cancel and …/retry (routes/dispatch-actions.ts).
import { setTimeout as sleep } from 'node:timers/promises'
import {
  CreateDispatchRequest,
  DispatchCreated,
  DispatchesQuery,
  DispatchId,
  DispatchPage,
  DispatchView,
  DispatchWaitQuery,
  EndingsPage,
  EndingsQuery,
  FINAL_STATUSES,
  metadataFilter,
} from '../../contract/index.js'
import type { Deps } from '../config.js'
import { listDispatches, listEndings } from '../db/dispatch-list.js'
import { findDispatch } from '../db/dispatches.js'
import { createDispatch } from '../dispatch/dispatches.js'
import { longPoll } from '../dispatch/long-poll.js'
import { requestGone } from '../http/deadline.js'
import { notFound } from '../http/errors.js'
import { authedRoute, createRouter, errorResponse, jsonBody, jsonResponse, scrubNul } from '../http/http.js'
import { holding, LONG_POLLS_HELD } from '../http/per-token.js'
import {
  cancelAndTell,
  cancelRoute,
  retryAndTell,
  retryRoute,
  withOptionalActionBodies,
} from './dispatch-actions.js'
import { openEventStream, streamRoute } from './dispatch-events.js'

const create = authedRoute(['orchestrator'], {
  method: 'post',
  path: '/v1/dispatches',
  tags: ['dispatches'],
  operationId: 'createDispatch',
  summary: 'Queue a dispatch of a subagent, optionally idempotent by key (orchestrator)',
  request: { body: jsonBody(CreateDispatchRequest) },
  responses: {
    200: jsonResponse(DispatchCreated, 'the dispatch created earlier with this idempotencyKey'),
    201: jsonResponse(DispatchCreated, 'the dispatch was queued'),
    409: errorResponse('the idempotencyKey was used for a different request (code idempotency-conflict)'),
    422: errorResponse('no such subagent is registered (code unknown-subagent)'),
  },
})

const list = authedRoute(['orchestrator', 'operator'], {
  method: 'get',
  path: '/v1/dispatches',
  tags: ['dispatches'],
  operationId: 'listDispatches',
  summary: 'Every dispatch, newest first, keyset-paginated, each saying why it ended',
  request: { query: DispatchesQuery },
  responses: { 200: jsonResponse(DispatchPage, 'one page of dispatches') },
})

export const ENDINGS_PATH = '/v1/dispatches/endings'

const endings = authedRoute(['orchestrator', 'operator'], {
  method: 'get',
  path: ENDINGS_PATH,
  tags: ['dispatches'],
  operationId: 'listEndings',
  summary: 'Dispatches as they end, oldest ending first from a cursor; waits up to waitMs for one',
  request: { query: EndingsQuery },
  responses: {
    200: jsonResponse(EndingsPage, 'the endings after the cursor (maybe none) and the cursor to go on from'),
    429: LONG_POLLS_HELD,
  },
})

const get = authedRoute(['orchestrator', 'operator'], {
  method: 'get',
  path: '/v1/dispatches/{id}',
  tags: ['dispatches'],
  operationId: 'getDispatch',
  summary: 'One dispatch; with waitFor=terminal, answered once it has ended or at the timeout',
  request: { params: DispatchId, query: DispatchWaitQuery },
  responses: {
    200: jsonResponse(
      DispatchView,
      'status, events, preflight report, completion (with waitFor: final, or as it stands at the timeout)',
    ),
    404: errorResponse('no such dispatch (code not-found)'),
    429: LONG_POLLS_HELD,
  },
})

export const dispatchRoutes = (deps: Deps) =>
  withOptionalActionBodies(createRouter())
    .openapi(create, async (c) => {
      const { dispatch, created } = await createDispatch(deps.db.orm, c.req.valid('json'), {
        maxAttempts: deps.config.maxAttempts,
        notify: deps.db.kind === 'postgres',
      })
      if (!created) return c.json(dispatch, 200)
      // Long-polling claims of this process wake at once; those of other coordinators through NOTIFY.
      deps.waker.wake()
      return c.json(dispatch, 201)
    })
    .openapi(list, async (c) => {
      const query = c.req.valid('query')
      return c.json(await listDispatches(deps.db.orm, { ...query, metadata: metadataFilter(query) }), 200)
    })
    // before {id}: "endings" is no dispatch id
    .openapi(endings, async (c) => {
      const gone = requestGone(c)
      const query = c.req.valid('query')
      const wait = Math.min(query.waitMs, deps.config.endingsWaitCapMs)
      return c.json(await holding(c, deps.longPolls, wait, () => endingsWithin(deps, query, wait, gone)), 200)
    })
    .openapi(get, async (c) => {
      const { id } = c.req.valid('param')
      const { waitFor, timeoutMs } = c.req.valid('query')
      const gone = requestGone(c)
      const wait = waitFor === undefined ? 0 : Math.min(timeoutMs ?? Infinity, deps.config.dispatchWaitCapMs)
      return c.json(await holding(c, deps.longPolls, wait, () => viewWithin(deps, id, wait, gone)), 200)
    })
    .openapi(streamRoute, async (c) => {
      const after = c.req.valid('header')['last-event-id']
      return openEventStream(deps, c, c.req.valid('param').id, after === undefined ? 0 : Number(after))
    })
    .openapi(cancelRoute, async (c) => {
      const { id } = c.req.valid('param')
      const { reason } = scrubNul(c.req.valid('json'))
      const by = { tokenId: c.get('tokenId') ?? null, role: c.get('role') }
      return c.json(await cancelAndTell(deps, id, { by, ...(reason === undefined ? {} : { reason }) }), 200)
    })
    .openapi(retryRoute, async (c) => {
      const { dispatch, created } = await retryAndTell(deps, c.req.valid('param').id, c.req.valid('json'))
      return created ? c.json(dispatch, 201) : c.json(dispatch, 200)
    })

// The dispatch once it has reached a final status, or as it stands after `waitMs`: woken when it may
// have changed (deps.watch), it reads it again.
async function viewWithin(
  deps: Deps,
  id: string,
  waitMs: number,
  signal: AbortSignal,
): Promise<DispatchView> {
  const { view } = await longPoll(
    {
      look: async () => {
        // The status and the events are read in one statement: an end written after it (its wake-up
        // perhaps before the wait) is a newer event than the view's, and the watch's next look wakes the
        // wait.
        const view = await findDispatch(deps.db.orm, id)
        if (!view) throw notFound(`dispatch ${id}`)
        return { seen: view.eventCount, view }
      },
      ready: ({ view }) => FINAL_STATUSES.has(view.status),
      park: ({ seen }, ms) => deps.watch.wait(id, seen, ms, signal),
      closed: () => deps.watch.isClosed,
    },
    waitMs,
    { clock: deps.clock, signal },
  )
  return view
}

// Answers at once when there are endings after the cursor, else waits up to waitMs (capped): woken by
// any coordinator's ending (NOTIFY), looking again every endingsPollMs only as a safety net.
async function endingsWithin(
  deps: Deps,
  query: EndingsQuery,
  waitMs: number,
  signal: AbortSignal,
): Promise<EndingsPage> {
  const { endingsPollMs, endingsSettleMs: settleMs } = deps.config
  let cursor = query.cursor
  const { page } = await longPoll(
    {
      look: async () => {
        const looked = performance.now()
        return { looked, page: await listEndings(deps.db.orm, { ...query, cursor, settleMs }) }
      },
      ready: ({ page }) => page.items.length > 0,
      park: async ({ looked, page }, ms, left) => {
        // From here on, what ended after this page's horizon.
        cursor = page.nextCursor
        // An ending the page left out as not yet settled woke the endings at most settleMs before the look
        // (its wake-up comes after its stamp): that wake-up counts, as does one during the look.
        const woken = await deps.endings.wait(Math.min(ms, endingsPollMs), signal, looked - settleMs)
        // Woken by an ending: it is answered once settled.
        if (woken && !signal.aborted && !deps.endings.isClosed)
          await sleep(Math.min(settleMs, Math.max(0, left())), undefined, { signal }).catch(() => {})
      },
      closed: () => deps.endings.isClosed,
    },
    waitMs,
    { clock: deps.clock, signal },
  )
  return page
}
