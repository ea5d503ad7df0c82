// POST /v1/subagents (register or update by name) and GET /v1/subagents/{name}[?version=N].
import {
  SubagentDefinition,
  SubagentPath,
  SubagentRegistered,
  SubagentVersionQuery,
  SubagentVersionView,
} from '../../contract/index.js'
import type { Deps } from '../config.js'
import { findSubagent, registerSubagent } from '../db/subagents.js'
import { notFound } from '../http/errors.js'
import { authedRoute, createRouter, errorResponse, jsonBody, jsonResponse } from '../http/http.js'

const register = authedRoute(['orchestrator'], {
  method: 'post',
  path: '/v1/subagents',
  tags: ['subagents'],
  operationId: 'registerSubagent',
  summary: 'Register a definition, or store a new version of it when its hash changed (orchestrator)',
  request: { body: jsonBody(SubagentDefinition) },
  responses: {
    200: jsonResponse(SubagentRegistered, 'unchanged: the latest version already has this hash'),
    201: jsonResponse(SubagentRegistered, 'a new version was stored'),
  },
})

const get = authedRoute(['orchestrator', 'operator'], {
  method: 'get',
  path: '/v1/subagents/{name}',
  tags: ['subagents'],
  operationId: 'getSubagent',
  summary: 'A definition: its latest version, or the one ?version= names',
  request: {
    params: SubagentPath,
    query: SubagentVersionQuery,
  },
  responses: {
    200: jsonResponse(SubagentVersionView, 'the definition version'),
    404: errorResponse('no such subagent or version (code not-found)'),
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
