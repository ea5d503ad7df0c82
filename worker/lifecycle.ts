// One dispatch, start to end: prepare → setup → verify → report → baseline → agent → complete. Nothing else.
import { type ClaimResponse, PreflightDecision } from '../src/contract/index.js'
import { agent } from './agent.js'
import { isCancelled, LeaseLostError } from './api.js'
import { baseline } from './baseline.js'
import type { Fenced, ReadClaim, Unreadable } from './claim.js'
import { cancelled, complete, fault, type Had, setupFailed } from './complete.js'
import { Abandoned, type DispatchDeps, type Ending, type Job, openJob } from './job.js'
import { prepare } from './prepare.js'
import { setup } from './setup.js'
import { refusal, report, verify } from './verify.js'

export function runDispatch(read: ReadClaim, deps: DispatchDeps): Promise<Ending> {
  return read.ok ? withJob(read.claim, deps, run) : withJob(read.claim, deps, refuse)
}

// What the dispatch had is kept as the steps return it: a cancel at any later point writes it.
async function run(job: Job<ClaimResponse>, had: Had): Promise<Ending> {
  const workspace = await prepare(job)
  if (!workspace.ok) return setupFailed(job, workspace)
  const prepared = await setup(job, workspace.dir)
  if (!prepared.ok) {
    had.tail = prepared.tail
    return setupFailed(job, prepared)
  }
  const preflight = await verify(job, workspace.dir)
  if (!proceeds(await report(job, preflight))) return 'preflight_failed'
  had.baseline = await baseline(job, workspace.dir, preflight)
  const exit = await agent(job, workspace.dir)
  Object.assign(had, { exit: { exitCode: exit.exitCode, durationMs: exit.durationMs }, tail: exit.tail })
  return complete(job, exit, had.baseline)
}

// A claim whose definition or workspace this worker cannot read: verify (nothing checked) → report → end.
// Nothing is prepared or run, whatever the coordinator answers.
async function refuse(job: Job<Unreadable>): Promise<Ending> {
  await report(job, await refusal(job))
  return 'preflight_failed'
}

// The agent starts only on a stored report answered exactly `proceed`, in the contract's shape.
function proceeds(answer: unknown): boolean {
  return PreflightDecision.safeParse(answer).data?.decision === 'proceed'
}

async function withJob<C extends Fenced>(
  claim: C,
  deps: DispatchDeps,
  steps: (job: Job<C>, had: Had) => Promise<Ending>,
): Promise<Ending> {
  const job = openJob(claim, deps)
  const had: Had = {}
  let ending: Ending = 'abandoned'
  try {
    ending = await steps(job, had)
  } catch (err) {
    // a stopped program's exit and tail come with the error that stopped the steps
    if (err instanceof Abandoned) Object.assign(had, err.had)
    ending = await abandon(job, err, had)
  } finally {
    await job.close(ending)
  }
  return ending
}

// Cancelled (a heartbeat or a write said so): the program that ran is stopped, and what the dispatch
// had is written to it. Lost lease, shutdown or a fault: the lease expires and another attempt runs it.
// A fault (the baseline's git fails, a 4xx from the coordinator) is posted as a `fault` event while
// the lease still holds, so the dispatch says why; after a lost lease or shutdown nothing more is written.
async function abandon(job: Job<Fenced>, err: unknown, had: Had): Promise<Ending> {
  if (isCancelled(err)) job.cancel()
  if (job.cancelled) return cancelled(job, had)
  const why = err instanceof Error ? err.message : String(err)
  // whatever error an aborted write or git run surfaces as, an aborted job was stopped, not faulted
  const expected = job.signal.aborted || err instanceof Abandoned || err instanceof LeaseLostError
  const level = expected ? 'info' : 'warn'
  job.log[level]('abandoned', { why })
  if (!expected) await fault(job, why)
  return 'abandoned'
}
