// Every write-side route with a valid body, for the bad-input and auth matrices.
import type { Role } from '../../src/contract/index.js'
import { definition, reportFor, workspace } from './fixtures.js'

export const someId = '00000000-0000-4000-8000-000000000000'
const fence = { attempt: 1, leaseToken: 'token' }

export interface RouteCase {
  method: string
  path: string
  roles: Role[]
  body?: Record<string, unknown>
}

export const routes: RouteCase[] = [
  { method: 'POST', path: '/v1/subagents', roles: ['orchestrator'], body: { ...definition('matrix') } },
  { method: 'GET', path: '/v1/subagents/matrix', roles: ['orchestrator', 'operator'] },
  {
    method: 'POST',
    path: '/v1/dispatches',
    roles: ['orchestrator'],
    body: { subagent: 'matrix', workspace, idempotencyKey: 'matrix' },
  },
  { method: 'GET', path: '/v1/dispatches', roles: ['orchestrator', 'operator'] },
  { method: 'GET', path: '/v1/dispatches/endings', roles: ['orchestrator', 'operator'] },
  { method: 'GET', path: `/v1/dispatches/${someId}`, roles: ['orchestrator', 'operator'] },
  {
    method: 'GET',
    path: `/v1/dispatches/${someId}?waitFor=terminal&timeoutMs=0`,
    roles: ['orchestrator', 'operator'],
  },
  { method: 'GET', path: `/v1/dispatches/${someId}/events`, roles: ['orchestrator', 'operator'] },
  { method: 'POST', path: `/v1/dispatches/${someId}/cancel`, roles: ['orchestrator'] },
  { method: 'POST', path: '/v1/worker/claim', roles: ['worker'], body: { workerId: 'w', waitMs: 0 } },
  { method: 'POST', path: `/v1/dispatches/${someId}/heartbeat`, roles: ['worker'], body: fence },
  {
    method: 'PUT',
    path: `/v1/dispatches/${someId}/preflight`,
    roles: ['worker'],
    body: { ...fence, report: reportFor(definition()) },
  },
  {
    method: 'POST',
    path: `/v1/dispatches/${someId}/events`,
    roles: ['worker'],
    body: { ...fence, step: 'setup' },
  },
  {
    method: 'POST',
    path: `/v1/dispatches/${someId}/complete`,
    roles: ['worker'],
    body: { ...fence, exitCode: 0 },
  },
  // admin only
  { method: 'GET', path: '/v1/tokens', roles: [] },
  { method: 'DELETE', path: '/v1/tokens/999999', roles: [] },
]

export const withBody = routes.filter(
  (r): r is RouteCase & { body: Record<string, unknown> } => r.body !== undefined,
)
