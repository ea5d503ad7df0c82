// What an orchestrator does to one dispatch, for the API (routes/dispatches.ts mounts the routes) and the
// operator page alike: cancel it, or retry it. Each decision is dispatch/'s; here, what the app does
// after it (count the end, wake whoever waits) and the routes' declarations.
import type { MiddlewareHandler } from 'hono'
import {
  type Cancellation,
  CancelRequest,
  DispatchCreated,
  DispatchId,
  RetryRequest,
} from '../../contract/index.js'
import type { Deps } from '../config.js'
import { type Creation, cancelDispatch, retryDispatch } from '../dispatch/dispatches.js'
import {
  type AppEnv,
  authedRoute,
  type createRouter,
  errorResponse,
  jsonBody,
  jsonResponse,
} from '../http/http.js'

export type ActionDeps = Pick<Deps, 'db' | 'config' | 'metrics' | 'waker' | 'endings' | 'watch'>

// Cancels the dispatch; a cancel that ended it is counted once, and what waits on it is woken.
export async function cancelAndTell(
  deps: ActionDeps,
  id: string,
  cancel: Omit<Cancellation, 'at'>,
): Promise<DispatchCreated> {
  const { answer, ended } = await cancelDispatch(deps.db.orm, id, cancel)
  // the cancel's reason is the caller's free text: never a label
  if (ended) deps.metrics.recordEnded('cancelled', undefined)
  deps.endings.wake()
  deps.watch.changed(id)
  return answer
}

// Queues the retry of an ended dispatch; a new one wakes the claims waiting on this coordinator (those
// of other coordinators through NOTIFY).
export async function retryAndTell(deps: ActionDeps, id: string, req: RetryRequest): Promise<Creation> {
  const retried = await retryDispatch(deps.db.orm, id, req, {
    maxAttempts: deps.config.maxAttempts,
    notify: deps.db.kind === 'postgres',
  })
  if (retried.created) deps.waker.wake()
  return retried
}

export const cancelRoute = authedRoute(['orchestrator'], {
  method: 'post',
  path: '/v1/dispatches/{id}/cancel',
  tags: ['dispatches'],
  operationId: 'cancelDispatch',
  summary: 'Cancel a dispatch that is queued, claimed or running (orchestrator); its worker stops within 2 s',
  request: { params: DispatchId, body: { ...jsonBody(CancelRequest), required: false } },
  responses: {
    200: jsonResponse(DispatchCreated, 'cancelled (also when it already was)'),
    404: errorResponse('no such dispatch (code not-found)'),
    409: errorResponse('the dispatch has ended otherwise; details.status says how (code invalid-state)'),
  },
})

export const retryRoute = authedRoute(['orchestrator'], {
  method: 'post',
  path: '/v1/dispatches/{id}/retry',
  tags: ['dispatches'],
  operationId: 'retryDispatch',
  summary:
    'Queue an ended dispatch again: the same subagent version, workspace, labels, priority and metadata (orchestrator)',
  request: { params: DispatchId, body: { ...jsonBody(RetryRequest), required: false } },
  responses: {
    200: jsonResponse(DispatchCreated, 'the retry created earlier with this idempotencyKey'),
    201: jsonResponse(DispatchCreated, 'the new dispatch was queued'),
    404: errorResponse('no such dispatch (code not-found)'),
    409: errorResponse(
      'the dispatch has not ended, details.status says where it is (code invalid-state); or the idempotencyKey was used for a different dispatch (code idempotency-conflict)',
    ),
  },
})

// A cancel's or a retry's body is optional: an empty one reads as {}, also under Content-Type:
// application/json (as clients sent a cancel before it took a body), rather than as malformed JSON.
// Hono keeps the body it read as a promise in bodyCache (its type says the value); the validator reads
// it from there.
const emptyBodyIsNone: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.header('content-type') && (await c.req.text()) === '')
    c.req.bodyCache.text = Promise.resolve('{}') as unknown as string
  await next()
}
export function withOptionalActionBodies(router: ReturnType<typeof createRouter>) {
  router.use('/v1/dispatches/:id/cancel', emptyBodyIsNone)
  router.use('/v1/dispatches/:id/retry', emptyBodyIsNone)
  return router
}
