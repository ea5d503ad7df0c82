// The worker's routes: claim (long-poll), and the fenced writes heartbeat, preflight, events, complete.
import type { Context } from 'hono'
import {
  ClaimRequest,
  ClaimResponse,
  CompleteRequest,
  CompleteResponse,
  DispatchId,
  EventRecorded,
  EventRequest,
  HeartbeatRequest,
  HeartbeatResponse,
  PreflightDecision,
  PreflightRequest,
} from '../../contract/index.js'
import type { Deps } from '../config.js'
import { claimNext } from '../db/leases.js'
import { completeDispatch } from '../dispatch/completions.js'
import { appendWorkerEvent } from '../dispatch/events.js'
import { renewLease } from '../dispatch/fence.js'
import { longPoll } from '../dispatch/long-poll.js'
import { storeReport } from '../dispatch/preflight.js'
import { isGone, requestGone } from '../http/deadline.js'
import {
  type AppEnv,
  authedRoute,
  createRouter,
  errorResponse,
  jsonBody,
  jsonResponse,
  scrubNul,
} from '../http/http.js'
import { holding, LONG_POLLS_HELD } from '../http/per-token.js'

const fencedErrors = {
  404: errorResponse('no such dispatch (code not-found)'),
  409: errorResponse('the lease expired or was superseded (code lease-lost), or the state forbids it'),
}

export const CLAIM_PATH = '/v1/worker/claim'

const claim = authedRoute(['worker'], {
  method: 'post',
  path: CLAIM_PATH,
  tags: ['worker'],
  operationId: 'claimDispatch',
  summary: 'Claim the oldest queued dispatch this worker can take, waiting up to waitMs (worker)',
  request: { body: jsonBody(ClaimRequest) },
  responses: {
    200: jsonResponse(ClaimResponse, 'a dispatch, its exact definition version and the lease'),
    204: { description: 'nothing was claimable within waitMs' },
    429: LONG_POLLS_HELD,
  },
})

const heartbeat = authedRoute(['worker'], {
  method: 'post',
  path: '/v1/dispatches/{id}/heartbeat',
  tags: ['worker'],
  operationId: 'renewLease',
  summary: 'Extend the lease of a claimed dispatch (worker, fenced)',
  request: { params: DispatchId, body: jsonBody(HeartbeatRequest) },
  responses: { 200: jsonResponse(HeartbeatResponse, 'the lease was extended'), ...fencedErrors },
})

const preflight = authedRoute(['worker'], {
  method: 'put',
  path: '/v1/dispatches/{id}/preflight',
  tags: ['worker'],
  operationId: 'putPreflightReport',
  summary: 'Store the preflight report and answer proceed or abort (worker, fenced)',
  request: { params: DispatchId, body: jsonBody(PreflightRequest) },
  responses: { 200: jsonResponse(PreflightDecision, 'stored; proceed or abort'), ...fencedErrors },
})

const events = authedRoute(['worker'], {
  method: 'post',
  path: '/v1/dispatches/{id}/events',
  tags: ['worker'],
  operationId: 'appendEvent',
  summary: 'Append a lifecycle step to the dispatch’s events (worker, fenced)',
  request: { params: DispatchId, body: jsonBody(EventRequest) },
  responses: {
    201: jsonResponse(EventRecorded, 'the step was appended (or, for a retry, the stored one)'),
    422: errorResponse('the attempt has its events, or the dispatch its bytes of detail (code event-limit)'),
    ...fencedErrors,
  },
})

const complete = authedRoute(['worker'], {
  method: 'post',
  path: '/v1/dispatches/{id}/complete',
  tags: ['worker'],
  operationId: 'completeDispatch',
  summary:
    'Finish the attempt: the agent’s exit, or a setup failure; with `next`, claim the next dispatch (worker, fenced)',
  request: { params: DispatchId, body: jsonBody(CompleteRequest) },
  responses: { 200: jsonResponse(CompleteResponse, 'the final status'), ...fencedErrors },
})

export const workerRoutes = (deps: Deps) =>
  createRouter()
    .openapi(claim, async (c) => {
      const started = performance.now()
      const req = c.req.valid('json')
      const wait = Math.min(req.waitMs ?? 0, deps.config.claimWaitCapMs)
      const got = await holding(c, deps.longPolls, wait, () => claimWithin(deps, req, wait, c))
      deps.metrics.observeClaimWait(performance.now() - started)
      if (!got) return c.body(null, 204)
      return c.json(claimed(deps, got), 200)
    })
    .openapi(heartbeat, async (c) => {
      const { id } = c.req.valid('param')
      return c.json(await renewLease(deps.db.orm, id, c.req.valid('json'), deps.config.leaseMs), 200)
    })
    .openapi(preflight, async (c) => {
      const { id } = c.req.valid('param')
      const body = scrubNul(c.req.valid('json'))
      const hint = deps.hints.take(id, body.attempt, body.leaseToken)
      const { answer, stored } = await storeReport(deps.db.orm, id, body, hint)
      // Counted once per stored report: a replayed one was counted when it was stored.
      if (stored) {
        deps.metrics.recordReport(stored.subagent, stored.judged)
        if (stored.judged.decision === 'abort')
          deps.metrics.recordEnded('preflight_failed', stored.judged.reason ?? stored.judged.outcome)
      }
      if (answer.status === 'preflight_failed') deps.endings.wake()
      deps.watch.changed(id)
      return c.json(answer, 200)
    })
    .openapi(events, async (c) => {
      const { id } = c.req.valid('param')
      const { step, detail, ...fence } = scrubNul(c.req.valid('json'))
      const recorded = await appendWorkerEvent(deps.db.orm, id, fence, step, detail, deps.config.eventLimits)
      deps.watch.changed(id)
      return c.json(recorded, 201)
    })
    .openapi(complete, async (c) => {
      const { id } = c.req.valid('param')
      const body = scrubNul(c.req.valid('json'))
      const { answer, written } = await completeDispatch(deps.db.orm, id, body)
      if (written) deps.metrics.recordEnded(written.status, written.reason)
      deps.endings.wake()
      deps.watch.changed(id)
      // Only for a completion this request stored, and while its worker still waits for the answer: a
      // retry (a replay) or an answer nobody reads would claim a dispatch for nobody until its lease lapsed.
      const next = body.next && written && !isGone(c) && (await claimAfter(deps, body.next))
      return c.json(next ? { ...answer, next } : answer, 200)
    })

// What every claim does once it holds a dispatch: the preflight report's check keeps its definition,
// and readers waiting on the dispatch look again.
function claimed(deps: Deps, got: ClaimResponse): ClaimResponse {
  const { id, attempt } = got.dispatch
  deps.hints.remember(id, attempt, got.lease.token, { contextRequires: got.subagent.contextRequires })
  deps.watch.changed(id)
  return got
}

// The next dispatch a completion asked for, claimed without waiting. The completion is stored already:
// a claim that fails answers it without `next`, and the worker claims as it would have.
async function claimAfter(deps: Deps, worker: NonNullable<CompleteRequest['next']>) {
  const started = performance.now()
  try {
    const got = await claimNext(deps.db.orm, worker, deps.config.leaseMs, deps.config.priorityAgingMs)
    // counted with the claims: the claim rate of the metrics is every claim's
    deps.metrics.observeClaimWait(performance.now() - started)
    return got && claimed(deps, got)
  } catch (err) {
    deps.log.warn('the claim asked for with a completion failed; answered without one', {
      workerId: worker.workerId,
      why: err instanceof Error ? err.message : String(err),
    })
    return undefined
  }
}

// Claims at once, else waits up to waitMs (capped): woken when a dispatch is queued or requeued (here,
// or on another coordinator through NOTIFY), looking again every claimPollMs only as a safety net.
async function claimWithin(
  deps: Deps,
  req: ClaimRequest,
  waitMs: number,
  c: Context<AppEnv>,
): Promise<ClaimResponse | undefined> {
  // A worker that has gone, or a deadline that passed: nobody would learn of a claim made now. Asked
  // before each look; the signal to wait on is made only when the claim parks.
  const gone = {
    get aborted() {
      return isGone(c)
    },
  }
  const { got } = await longPoll(
    {
      look: async () => {
        // A worker that has gone would never learn of a claim: its lease would hold the dispatch until it lapsed.
        if (gone.aborted) return { looked: 0, got: undefined }
        const looked = performance.now()
        return {
          looked,
          got: await claimNext(deps.db.orm, req, deps.config.leaseMs, deps.config.priorityAgingMs),
        }
      },
      ready: ({ got }) => got !== undefined,
      // a dispatch queued while the claim looked (after its snapshot) woke it already: it looks again at once
      park: ({ looked }, ms) =>
        deps.waker.wait(Math.min(ms, deps.config.claimPollMs), requestGone(c), looked),
      closed: () => deps.waker.isClosed,
    },
    waitMs,
    { clock: deps.clock, signal: gone },
  )
  return got
}
