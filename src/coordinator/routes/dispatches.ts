// POST /v1/dispatches, GET /v1/dispatches/{id}, POST /v1/dispatches/{id}/cancel.
import { CreateDispatchRequest, DispatchCreated, DispatchId, DispatchView } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { findDispatch } from '../db/dispatches.js'
import { cancelDispatch, createDispatch } from '../dispatch/dispatches.js'
import { notFound } from '../http/errors.js'
import { authedRoute, createRouter, errorResponse, jsonBody, jsonResponse } from '../http/http.js'

const create = authedRoute(['orchestrator'], {
  method: 'post',
  path: '/v1/dispatches',
  tags: ['dispatches'],
  request: { body: jsonBody(CreateDispatchRequest) },
  responses: {
    200: jsonResponse(DispatchCreated, 'the dispatch created earlier with this idempotencyKey'),
    201: jsonResponse(DispatchCreated, 'the dispatch was queued'),
    409: errorResponse('the idempotencyKey was used for a different request (code idempotency-conflict)'),
    422: errorResponse('no such subagent is registered (code unknown-subagent)'),
  },
})

const get = authedRoute(['orchestrator', 'operator'], {
  method: 'get',
  path: '/v1/dispatches/{id}',
  tags: ['dispatches'],
  request: { params: DispatchId },
  responses: {
    200: jsonResponse(DispatchView, 'status, events, preflight report, completion'),
    404: errorResponse('no such dispatch (code not-found)'),
  },
})

const cancel = authedRoute(['orchestrator'], {
  method: 'post',
  path: '/v1/dispatches/{id}/cancel',
  tags: ['dispatches'],
  request: { params: DispatchId },
  responses: {
    200: jsonResponse(DispatchCreated, 'cancelled (also when it already was)'),
    404: errorResponse('no such dispatch (code not-found)'),
    409: errorResponse('the dispatch is past claimed (code invalid-state)'),
  },
})

export const dispatchRoutes = (deps: Deps) =>
  createRouter()
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
    .openapi(get, async (c) => {
      const { id } = c.req.valid('param')
      const view = await findDispatch(deps.db.orm, id)
      if (!view) throw notFound(`dispatch ${id}`)
      return c.json(view, 200)
    })
    .openapi(cancel, async (c) => c.json(await cancelDispatch(deps.db.orm, c.req.valid('param').id), 200))
