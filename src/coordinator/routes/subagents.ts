// POST /v1/subagents (register or update by name) and GET /v1/subagents/{name}[?version=N].
import { createRoute, z } from '@hono/zod-openapi'
import { SubagentName, SubagentRegistered, SubagentVersionView } from '../../contract/api.js'
import { SubagentDefinition } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { findSubagent, registerSubagent } from '../db/subagents.js'
import { requireRole } from '../http/auth.js'
import { notFound } from '../http/errors.js'
import { authErrors, createRouter, errorResponse, jsonBody, jsonResponse } from '../http/http.js'

const register = createRoute({
  method: 'post',
  path: '/v1/subagents',
  tags: ['subagents'],
  security: [{ bearer: [] }],
  middleware: [requireRole('orchestrator')] as const,
  request: { body: jsonBody(SubagentDefinition) },
  responses: {
    200: jsonResponse(SubagentRegistered, 'unchanged: the latest version already has this hash'),
    201: jsonResponse(SubagentRegistered, 'a new version was stored'),
    ...authErrors,
  },
})

const get = createRoute({
  method: 'get',
  path: '/v1/subagents/{name}',
  tags: ['subagents'],
  security: [{ bearer: [] }],
  middleware: [requireRole('orchestrator', 'operator')] as const,
  request: {
    params: z.object({ name: SubagentName }),
    query: z.strictObject({
      version: z
        .string()
        .regex(/^[1-9][0-9]{0,8}$/, 'version is a whole number from 1')
        .transform(Number)
        .optional(),
    }),
  },
  responses: {
    200: jsonResponse(SubagentVersionView, 'the definition version'),
    404: errorResponse('no such subagent or version (code not-found)'),
    ...authErrors,
  },
})

export const subagentRoutes = (deps: Deps) =>
  createRouter()
    .openapi(register, async (c) => {
      const { created, ...registered } = await registerSubagent(deps.db.orm, c.req.valid('json'))
      return created ? c.json(registered, 201) : c.json(registered, 200)
    })
    .openapi(get, async (c) => {
      const { name } = c.req.valid('param')
      const { version } = c.req.valid('query')
      const found = await findSubagent(deps.db.orm, name, version)
      if (!found)
        throw notFound(version === undefined ? `subagent "${name}"` : `subagent "${name}" version ${version}`)
      return c.json(found, 200)
    })
