// Dispatches driven over HTTP to each way a dispatch ends, for the listing tests: queued, claimed and
// then setup_failed, preflight_failed, running, succeeded, failed, expired or cancelled.
import type { AgentExit, SubagentDefinition } from '../../src/contract/index.js'
import { sweepLeases } from '../../src/coordinator/db/leases.js'
import type { TestApp } from './app.js'
import { claim, definition, fenceOf, lapseLease, queueDispatch, reportFor } from './fixtures.js'

export interface Driven {
  id: string
  workerId: string
}

async function ok(reply: Promise<{ status: number; body: unknown }>, what: string) {
  const r = await reply
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body
}

export const queued = (
  h: TestApp,
  def: SubagentDefinition = definition(),
  extra: Record<string, unknown> = {},
) => queueDispatch(h, def, extra)

// Queues a dispatch and claims it as `workerId` (nothing else may be queued: the claim takes the oldest).
export async function claimed(h: TestApp, def = definition(), workerId = 'w1') {
  const id = await queueDispatch(h, def)
  const c = await claim(h, workerId)
  if (c.dispatch.id !== id) throw new Error('another dispatch was claimed')
  return { id, workerId, fence: fenceOf(c) }
}

export async function setupFailed(
  h: TestApp,
  opts: { def?: SubagentDefinition; workerId?: string; reason?: string; detail?: string } = {},
): Promise<Driven> {
  const { id, workerId, fence } = await claimed(h, opts.def, opts.workerId)
  const body = {
    ...fence,
    status: 'setup_failed',
    reason: opts.reason ?? 'setup-exit',
    detail: opts.detail ?? 'npm ERR! missing script: build\n',
    exitCode: 1,
  }
  await ok(h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body }), 'setup failure')
  return { id, workerId }
}

// The report's results all `unmet` (reason not-found) or all `error` (reason timeout).
export async function preflightFailed(
  h: TestApp,
  opts: { def?: SubagentDefinition; workerId?: string; status?: 'unmet' | 'error' } = {},
): Promise<Driven> {
  const def = opts.def ?? definition()
  const { id, workerId, fence } = await claimed(h, def, opts.workerId)
  const body = { ...fence, report: reportFor(def, opts.status ?? 'unmet') }
  await ok(h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body }), 'report')
  return { id, workerId }
}

export async function running(h: TestApp, opts: { def?: SubagentDefinition; workerId?: string } = {}) {
  const def = opts.def ?? definition()
  const { id, workerId, fence } = await claimed(h, def, opts.workerId)
  await ok(
    h.call('PUT', `/v1/dispatches/${id}/preflight`, {
      role: 'worker',
      body: { ...fence, report: reportFor(def) },
    }),
    'report',
  )
  return { id, workerId, fence }
}

// The agent ran and exited with `exitCode` (0: succeeded, else failed).
export async function exited(
  h: TestApp,
  exitCode: number,
  opts: { def?: SubagentDefinition; workerId?: string; more?: Partial<AgentExit> } = {},
): Promise<Driven> {
  const { id, workerId, fence } = await running(h, opts)
  const body = { ...fence, exitCode, durationMs: 5, ...opts.more }
  await ok(h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body }), 'completion')
  return { id, workerId }
}

// Claimed, faulted (when `fault` is given) and its lease lapsed: expired when the app's maxAttempts is 1.
export async function expired(
  h: TestApp,
  opts: { def?: SubagentDefinition; workerId?: string; fault?: string } = {},
): Promise<Driven> {
  const { id, workerId, fence } = await claimed(h, opts.def, opts.workerId)
  if (opts.fault !== undefined) {
    const body = { ...fence, step: 'fault', detail: { message: opts.fault } }
    await ok(h.call('POST', `/v1/dispatches/${id}/events`, { role: 'worker', body }), 'fault')
  }
  await lapseLease(h, id)
  const swept = await sweepLeases(h.t.db.orm)
  if (!swept.some((d) => d.id === id && d.status === 'expired'))
    throw new Error('not expired: maxAttempts 1?')
  return { id, workerId }
}

export async function cancelled(h: TestApp, def = definition()): Promise<Driven> {
  const id = await queueDispatch(h, def)
  await ok(h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator' }), 'cancel')
  return { id, workerId: '' }
}
