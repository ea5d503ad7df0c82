// GET /v1/tokens and DELETE /v1/tokens/{id} (admin): list tokens (never the secret) and revoke one.
import { TokenId, TokenPage, TokensQuery, TokenView } from '../../contract/index.js'
import type { Deps } from '../config.js'
import { listTokens, revokeToken } from '../db/tokens.js'
import { notFound } from '../http/errors.js'
import { authedRoute, createRouter, errorResponse, jsonResponse } from '../http/http.js'

const list = authedRoute([], {
  method: 'get',
  path: '/v1/tokens',
  tags: ['tokens'],
  operationId: 'listTokens',
  summary: 'Every token, oldest first, keyset-paginated: role, label, state, created, last used (admin)',
  request: { query: TokensQuery },
  responses: { 200: jsonResponse(TokenPage, 'one page of tokens') },
})

const revoke = authedRoute([], {
  method: 'delete',
  path: '/v1/tokens/{id}',
  tags: ['tokens'],
  operationId: 'revokeToken',
  summary: 'Revoke a token: refused at once by every coordinator, for good (admin)',
  request: { params: TokenId },
  responses: {
    200: jsonResponse(TokenView, 'revoked (also when it already was: the first revocation date stays)'),
    404: errorResponse('no such token (code not-found)'),
  },
})

export const tokenRoutes = (deps: Deps) =>
  createRouter()
    .openapi(list, async (c) => c.json(await listTokens(deps.db.orm, c.req.valid('query')), 200))
    .openapi(revoke, async (c) => {
      const { id } = c.req.valid('param')
      const revoked = await revokeToken(deps.db.orm, id, deps.db.kind === 'postgres')
      if (!revoked) throw notFound(`token ${id}`)
      // This coordinator at once; the others when the NOTIFY reaches them.
      deps.tokens.invalidate()
      return c.json(revoked, 200)
    })
