import { randomUUID } from 'node:crypto'
// Definitions and reports for route tests.
import { sql } from 'drizzle-orm'
import {
  type CheckResult,
  type ClaimResponse,
  listRequirements,
  type PreflightReport,
  type SubagentDefinition,
} from '../../src/contract/index.js'
import type { TestApp } from './app.js'

export const definition = (name = 'frontend-fixer'): SubagentDefinition => ({
  name,
  description: 'fixes the frontend',
  agent: { command: ['claude', '-p', 'fix it'], env: { MODE: 'ci' } },
  contextRequires: { paths: ['package.json', 'src/**/*.ts'], exec: ['git', 'node'], git: { worktree: true } },
})

export const workspace = { repo: 'https://git.example.invalid/app.git', ref: 'main' }

// One result per declared requirement, in declaration order, all with the given status.
export function reportFor(def: SubagentDefinition, status: CheckResult['status'] = 'met'): PreflightReport {
  const results = listRequirements(def.contextRequires).map((r) => ({
    ...r,
    status,
    ...(status === 'met' ? {} : { reason: status === 'unmet' ? 'not-found' : 'timeout' }),
    observed: {},
    durationMs: 1,
  }))
  const now = new Date().toISOString()
  return {
    outcome: status,
    declared: results.length > 0,
    results,
    startedAt: now,
    finishedAt: now,
    worker: { id: 'w1' },
  }
}

// Registers the definition and queues one dispatch; returns its id.
export async function queueDispatch(h: TestApp, def = definition(), extra: Record<string, unknown> = {}) {
  const registered = await h.call('POST', '/v1/subagents', { body: def })
  if (registered.status >= 300)
    throw new Error(`registering failed: ${registered.status} ${JSON.stringify(registered.body)}`)
  const r = await h.call('POST', '/v1/dispatches', { body: { subagent: def.name, workspace, ...extra } })
  if (r.status !== 201) throw new Error(`queueing failed: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id as string
}

export async function claim(h: TestApp, workerId = 'w1'): Promise<ClaimResponse> {
  const r = await h.call('POST', '/v1/worker/claim', { role: 'worker', body: { workerId } })
  if (r.status !== 200) throw new Error(`claim answered ${r.status}`)
  return r.body
}

// A claim as a worker receives it, for the worker's own tests (no coordinator): a workspace.path that
// nothing reads, its lease running out in `leaseMs`.
export function workerClaim(leaseMs = 60_000): ClaimResponse {
  return {
    dispatch: {
      id: randomUUID(),
      attempt: 1,
      workspace: { path: '/nowhere' },
      subagent: { name: 's', version: 1 },
    },
    subagent: { name: 's', agent: { command: ['true'] } },
    lease: { token: 't', expiresAt: new Date(Date.now() + leaseMs).toISOString() },
  } as ClaimResponse
}

export const fenceOf = (c: ClaimResponse) => ({ attempt: c.dispatch.attempt, leaseToken: c.lease.token })

// Makes a dispatch's lease run out now (no sleeping): the sweep and the fence see it as lapsed.
export async function lapseLease(h: TestApp, id: string) {
  await h.t.db.orm.execute(
    sql`UPDATE dispatches SET lease_expires_at = now() - interval '1 second' WHERE id = ${id}`,
  )
}
