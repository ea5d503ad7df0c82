// How a dispatch's attempt ends on the coordinator: its completion (with the agent's output tail), its
// setup failure, what a cancelled one had, or a fault.
import {
  type AgentExit,
  type Baseline,
  ErrorCode,
  FAULT_TEXT_CHARS,
  MAX_DETAIL_CHARS,
} from '../src/contract/index.js'
import type { AgentRun } from './agent.js'
import { type Api, ApiError, isRetryable } from './api.js'
import type { Fenced } from './claim.js'
import {
  begin,
  type Ending,
  ensureActive,
  type Failure,
  type Job,
  type NextRequest,
  type ProgramHad,
} from './job.js'

// What a dispatch has so far, written to it when it is cancelled: the baseline once taken, the exit and
// the output's tail of the program (setup, agent) that was stopped or ran last.
export interface Had extends ProgramHad {
  baseline?: Baseline
}

export async function complete(job: Job, run: AgentRun, base: Baseline | undefined): Promise<Ending> {
  ensureActive(job)
  job.enter('complete')
  const completion = {
    exitCode: run.exitCode,
    durationMs: run.durationMs,
    ...(base ? { baseline: base } : {}),
    ...(run.reason ? { reason: run.reason } : {}),
    ...outputTail(run.tail),
    ...outputDropped(job),
    ...observed(job),
  }
  const next = job.deps.next?.ask()
  const answer = await sendExit(job, completion, next)
  // a claim is taken only when asked for: one the worker did not ask for would pass --max-dispatches
  if (next && answer?.next) job.deps.next?.handed(answer.next)
  // a cancel that won the race: the dispatch keeps this completion as what it had
  if (answer?.status === 'cancelled') return 'cancelled'
  return run.exitCode === 0 && !run.reason ? 'succeeded' : 'failed'
}

export async function setupFailed(job: Job, failure: Failure): Promise<Ending> {
  await begin(job, 'setup-failed', { reason: failure.reason, detail: failure.detail })
  const body = {
    reason: failure.reason,
    detail: failure.detail,
    ...(failure.exitCode === undefined ? {} : { exitCode: failure.exitCode }),
    ...outputDropped(job),
    ...observed(job),
  }
  const answer = await withLess(job, body, (less) => job.deps.api.setupFailed(job.fence, less, job.signal))
  return answer?.status === 'cancelled' ? 'cancelled' : 'setup_failed'
}

// Cancelled: what the dispatch had (the stopped program's exit and output tail, the baseline) is written
// to it, best effort and bounded like a fault; the cancel itself is already stored.
export async function cancelled(job: Job<Fenced>, { baseline: base, exit, tail }: Had): Promise<Ending> {
  job.enter('cancelled')
  const had = {
    ...exit,
    ...(base ? { baseline: base } : {}),
    ...outputTail(tail),
    ...outputDropped(job),
    ...observed(job),
  }
  const bounded = AbortSignal.any([job.deps.signal, AbortSignal.timeout(job.deps.config.faultPostMs)])
  try {
    await withLess(job, had, (less) => job.deps.api.cancelled(job.fence, less, bounded))
  } catch (err) {
    job.log.warn('could not write what the cancelled dispatch had', {
      why: err instanceof Error ? err.message : String(err),
    })
  }
  return 'cancelled'
}

// Best effort and bounded (config.faultPostMs): a fault is already the end of this attempt.
export async function fault(job: Job<Fenced>, message: string): Promise<void> {
  const bounded = AbortSignal.any([job.signal, AbortSignal.timeout(job.deps.config.faultPostMs)])
  try {
    await job.deps.api.event(job.fence, 'fault', { message: message.slice(0, FAULT_TEXT_CHARS) }, bounded)
  } catch {
    // the worker log has it
  }
}

// The agent's completion, sent under the worker's signal rather than the job's: it is fenced on the
// coordinator, and a heartbeat answered 409 once the completion is stored (the dispatch has ended)
// must not stop the request that stored it and lose its answer, with the next dispatch in it. With
// `next`, one try; after a failure that may be retried, or a refusal, it is sent again without `next`,
// as before, and as an older coordinator takes it.
async function sendExit(
  job: Job<Fenced>,
  completion: AgentExit,
  next: NextRequest | undefined,
): ReturnType<Api['complete']> {
  const signal = job.deps.signal
  if (next)
    try {
      return await job.deps.api.complete(job.fence, { ...completion, next }, signal, true)
    } catch (err) {
      if (refusesNext(err)) {
        job.log.info('the coordinator does not take next: the completion is sent again without it')
        job.deps.next?.refused()
      } else if (!isRetryable(err) && !isRefusedAsTooMuch(err)) throw err
    }
  return withLess(job, completion, (body) => job.deps.api.complete(job.fence, body, signal))
}

// A coordinator from before `next` refuses the key as unknown (400 invalid-request, nothing stored).
const refusesNext = (err: unknown) =>
  err instanceof ApiError &&
  err.status === 400 &&
  err.code === ErrorCode.InvalidRequest &&
  /"next"/.test(`${err.message} ${JSON.stringify(err.details ?? null)}`)

// A completion the coordinator refuses as too much or unknown (400 invalid-request, 413; nothing stored)
// is sent again with less, as an older coordinator takes it: first without the observation, then
// without the output's tail too. An observation never costs the completion.
async function withLess<
  B extends { detail?: string | undefined; observed?: unknown; undeclared?: unknown },
  R,
>(job: Job<Fenced>, body: B, send: (body: B) => Promise<R>): Promise<R> {
  const { observed, undeclared: _u, ...plain } = body
  const { detail, ...bare } = plain
  // each with less than the one before
  const fallbacks = [
    ...(observed === undefined ? [] : [{ body: plain as B, without: 'the observation' }]),
    ...(detail === undefined ? [] : [{ body: bare as B, without: 'the output tail' }]),
  ]
  let sending = body
  for (;;) {
    try {
      return await send(sending)
    } catch (err) {
      const less = fallbacks.shift()
      if (!isRefusedAsTooMuch(err) || !less) throw err
      job.log.info('the coordinator refused the completion: it is sent again with less', {
        without: less.without,
      })
      sending = less.body
    }
  }
}

const isRefusedAsTooMuch = (err: unknown) =>
  err instanceof ApiError &&
  (err.status === 413 || (err.status === 400 && err.code === ErrorCode.InvalidRequest))

// What setup and the agent used, and what of it the definition does not declare (--observe).
function observed(job: Job<Fenced>): Pick<AgentExit, 'observed' | 'undeclared'> {
  if (!job.observation || !('subagent' in job.claim)) return {}
  const { subagent } = job.claim as Job['claim']
  return job.observation.record(subagent.contextRequires, subagent.agent.command)
}

// The output's tail the completion keeps (its last characters), when the program printed anything.
function outputTail(tail: string | undefined): { detail?: string } {
  return tail ? { detail: tail.slice(-MAX_DETAIL_CHARS) } : {}
}

// What the dispatch's completion says of its output: how many lines the log dropped, when it dropped any.
function outputDropped(job: Job<Fenced>): { outputDropped?: number } {
  const dropped = job.log.outputDropped()
  return dropped > 0 ? { outputDropped: dropped } : {}
}
