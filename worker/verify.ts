// The verify step and its report: the definition's requirements checked as the agent, the report stored
// by the coordinator before the agent may start (lifecycle.ts judges its answer).
import type { PreflightReport } from '../src/contract/index.js'
import { verify as verifyRequirements } from './checks/index.js'
import { type Fenced, refusalReport, type Unreadable } from './claim.js'
import { begin, type Job } from './job.js'

export async function verify(job: Job, dir: string): Promise<PreflightReport> {
  await begin(job, 'verify')
  const result = await verifyRequirements(job.claim.subagent.contextRequires, {
    workspace: dir,
    env: job.agentEnv,
    git: job.git.run,
    // the verdict is the agent's: what its uid may reach and execute, not what the worker may
    ...(job.identity ? { agent: job.identity } : {}),
    timeoutMs: job.deps.config.checkTimeoutMs,
  })
  return { ...result, worker: job.workerInfo }
}

// A claim this worker could not read: nothing is checked, every declared requirement is error invalid-claim.
export async function refusal(job: Job<Unreadable>): Promise<PreflightReport> {
  await begin(job, 'verify', { problem: job.claim.problem })
  return { ...refusalReport(job.claim, new Date().toISOString()), worker: job.workerInfo }
}

// The coordinator stores the report before it answers; its answer, as it arrived, for lifecycle.ts to judge.
export async function report(job: Job<Fenced>, preflight: PreflightReport): Promise<unknown> {
  await begin(job, 'report', { outcome: preflight.outcome })
  return job.deps.api.report(job.fence, preflight, job.signal)
}
