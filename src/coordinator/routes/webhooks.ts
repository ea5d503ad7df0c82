// /v1/webhooks (admin): register, list and delete alert webhooks, and read a webhook's delivery log.
import { randomBytes } from 'node:crypto'
import {
  CreateWebhookRequest,
  DeliveriesQuery,
  DeliveryPage,
  MAX_WEBHOOKS,
  WebhookCreated,
  WebhookId,
  WebhookList,
} from '../../contract/index.js'
import type { Deps } from '../config.js'
import { deleteWebhook, insertWebhook, listDeliveries, listWebhooks, webhookExists } from '../db/webhooks.js'
import { ApiError, ErrorCode, notFound } from '../http/errors.js'
import { authedRoute, createRouter, errorResponse, jsonBody, jsonResponse } from '../http/http.js'

const create = authedRoute([], {
  method: 'post',
  path: '/v1/webhooks',
  tags: ['webhooks'],
  operationId: 'createWebhook',
  summary:
    'Register a webhook for dispatch.failed and/or requirement.drifted; answers its secret once (admin)',
  request: { body: jsonBody(CreateWebhookRequest) },
  responses: {
    201: jsonResponse(WebhookCreated, 'registered'),
    409: errorResponse(`already ${MAX_WEBHOOKS} webhooks (code too-many-webhooks)`),
  },
})

const list = authedRoute([], {
  method: 'get',
  path: '/v1/webhooks',
  tags: ['webhooks'],
  operationId: 'listWebhooks',
  summary: 'Every webhook, oldest first, without its secret (admin)',
  responses: { 200: jsonResponse(WebhookList, 'the webhooks') },
})

const remove = authedRoute([], {
  method: 'delete',
  path: '/v1/webhooks/{id}',
  tags: ['webhooks'],
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook and its pending deliveries (admin)',
  request: { params: WebhookId },
  responses: { 204: { description: 'deleted' }, 404: errorResponse('no such webhook (code not-found)') },
})

const deliveries = authedRoute([], {
  method: 'get',
  path: '/v1/webhooks/{id}/deliveries',
  tags: ['webhooks'],
  operationId: 'listDeliveries',
  summary: "A webhook's deliveries, newest first: tries, last status or error, delivered or given up (admin)",
  request: { params: WebhookId, query: DeliveriesQuery },
  responses: {
    200: jsonResponse(DeliveryPage, 'one page of deliveries'),
    404: errorResponse('no such webhook (code not-found)'),
  },
})

export const webhookRoutes = (deps: Pick<Deps, 'db'>) =>
  createRouter()
    .openapi(create, async (c) => {
      const body = c.req.valid('json')
      const secret = body.secret ?? `whsec_${randomBytes(32).toString('base64url')}`
      const hook = await insertWebhook(
        deps.db.orm,
        { url: body.url, events: body.events, secret },
        MAX_WEBHOOKS,
      )
      if (!hook)
        throw new ApiError(409, ErrorCode.TooManyWebhooks, `there are already ${MAX_WEBHOOKS} webhooks`)
      return c.json({ ...hook, secret }, 201)
    })
    .openapi(list, async (c) => c.json({ items: await listWebhooks(deps.db.orm) }, 200))
    .openapi(remove, async (c) => {
      const { id } = c.req.valid('param')
      if (!(await deleteWebhook(deps.db.orm, id))) throw notFound(`webhook ${id}`)
      return c.body(null, 204)
    })
    .openapi(deliveries, async (c) => {
      const { id } = c.req.valid('param')
      if (!(await webhookExists(deps.db.orm, id))) throw notFound(`webhook ${id}`)
      return c.json(await listDeliveries(deps.db.orm, id, c.req.valid('query')), 200)
    })
