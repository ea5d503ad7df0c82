// GET /v1/tokens, POST /v1/tokens and DELETE /v1/tokens/{id} (admin): list tokens (never the secret), mint
// one (its secret in that answer only) and revoke one — what `preflight token` does against the database,
// for a coordinator whose database the CLI cannot open (an embedded one it holds).
import {
  TokenCreate,
  TokenCreated,
  TokenId,
  TokenPage,
  TokensQuery,
  TokenView,
} from '../../contract/index.js'
import type { Deps } from '../config.js'
import { listTokens, revokeToken } from '../db/tokens.js'
import { createToken } from '../http/auth.js'
import { ApiError, ErrorCode, notFound } from '../http/errors.js'
import { authedRoute, createRouter, errorResponse, jsonBody, jsonResponse } from '../http/http.js'

const list = authedRoute([], {
  method: 'get',
  path: '/v1/tokens',
  tags: ['tokens'],
  operationId: 'listTokens',
  summary: 'Every token, oldest first, keyset-paginated: role, label, state, created, last used (admin)',
  request: { query: TokensQuery },
  responses: { 200: jsonResponse(TokenPage, 'one page of tokens') },
})

const mint = authedRoute([], {
  method: 'post',
  path: '/v1/tokens',
  tags: ['tokens'],
  operationId: 'createToken',
  summary: 'Mint a token of one role; the answer holds its secret, which is never shown again (admin)',
  request: { body: jsonBody(TokenCreate) },
  responses: {
    201: jsonResponse(TokenCreated, 'minted: the token and its secret'),
    400: errorResponse('bad body, or an expiry not in the future (code invalid-request)'),
  },
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
    .openapi(mint, async (c) => {
      const { role, label, expiresAt } = c.req.valid('json')
      const expires = expiresAt === undefined ? undefined : new Date(expiresAt)
      if (expires && expires.getTime() <= deps.clock.now())
        throw new ApiError(400, ErrorCode.InvalidRequest, `expiresAt ${expiresAt} is not in the future`)
      const { token, view } = await createToken(deps.db.orm, role, { label, expiresAt: expires })
      return c.json({ ...view, token }, 201)
    })
    .openapi(revoke, async (c) => {
      const { id } = c.req.valid('param')
      const revoked = await revokeToken(deps.db.orm, id, deps.db.kind === 'postgres')
      if (!revoked) throw notFound(`token ${id}`)
      // This coordinator at once; the others when the NOTIFY reaches them.
      deps.tokens.invalidate()
      return c.json(revoked, 200)
    })
