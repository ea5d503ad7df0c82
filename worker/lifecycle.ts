// One dispatch, start to end: prepare → setup → verify → report → baseline → agent → complete. Nothing else.
import type { Claim } from './api.js'
import { LeaseLostError } from './api.js'
import { Abandoned, type DispatchDeps, type Ending, openJob } from './job.js'
import { agent, baseline, complete, fault, prepare, report, setup, setupFailed, verify } from './steps.js'

export async function runDispatch(claim: Claim, deps: DispatchDeps): Promise<Ending> {
  const job = openJob(claim, deps)
  let ending: Ending = 'abandoned'
  try {
    ending = await run()
  } catch (err) {
    ending = await abandon(err)
  } finally {
    await job.close(ending)
  }
  return ending

  async function run(): Promise<Ending> {
    const workspace = await prepare(job)
    if (!workspace.ok) return setupFailed(job, workspace)
    const prepared = await setup(job, workspace.dir)
    if (!prepared.ok) return setupFailed(job, prepared)
    const preflight = await verify(job, workspace.dir)
    if ((await report(job, preflight)) !== 'proceed') return 'preflight_failed'
    const base = await baseline(job, workspace.dir)
    const exit = await agent(job, workspace.dir)
    return complete(job, exit, base)
  }

  // Lost lease, shutdown or a fault: the lease expires and another attempt runs it. A fault (the
  // baseline's git fails, a 4xx from the coordinator) is posted as a `fault` event while the lease
  // still holds, so the dispatch says why; after a lost lease or shutdown nothing more is written.
  async function abandon(err: unknown): Promise<Ending> {
    const why = err instanceof Error ? err.message : String(err)
    // whatever error an aborted write or git run surfaces as, an aborted job was stopped, not faulted
    const expected = job.signal.aborted || err instanceof Abandoned || err instanceof LeaseLostError
    deps.log[expected ? 'info' : 'warn'](`dispatch ${claim.dispatch.id}: abandoned: ${why}`)
    if (!expected) await fault(job, why)
    return 'abandoned'
  }
}
