// Completion: the agent's exit (running → succeeded | failed) or a setup failure (claimed → setup_failed),
// written once behind the fence; a retry of the same completion gets the same answer.
import type { CompleteRequest, CompleteResponse, Completion, DispatchStatus } from '../../contract/index.js'
import { canonicalJson } from '../../contract/index.js'
import type { Orm } from '../db/client.js'
import { type CompletionRead, readForCompletion, writeCompletion } from '../db/completions.js'
import { DispatchCode, DispatchError, dispatchNotFound, invalidState, leaseLost } from './errors.js'
import { fencedWrite } from './fence.js'

export interface Completed {
  answer: CompleteResponse
  // what this call stored; absent for a retry of a stored completion (it was counted when stored)
  written?: { status: DispatchStatus; reason?: string | undefined }
}

// The write goes first: its WHERE holds every check the read makes, so the expected case is one round
// trip; only when it matches nothing does the read say why (a retry gets the same answer, else a refusal).
export async function completeDispatch(db: Orm, id: string, req: CompleteRequest): Promise<Completed> {
  const completion = completionOf(req)
  const required: DispatchStatus = req.status === 'setup_failed' ? 'claimed' : 'running'
  // A setup failure ends the dispatch for its reason; an agent's exit has its exit code instead.
  const reasons = completion.reason === undefined ? [] : [completion.reason]
  const write = async (): Promise<Completed | undefined> =>
    (await writeCompletion(db, id, req, required, completion, reasons))
      ? {
          answer: { id, status: completion.status },
          written: { status: completion.status, reason: completion.reason },
        }
      : undefined
  const first = await write()
  if (first) return first
  return fencedWrite('this completion', async () => {
    const d = await readForCompletion(db, id)
    if (!d) throw dispatchNotFound(id)
    const replayed = replayOrRefuse(d, req, required, completion)
    if (replayed) return { answer: { id, status: replayed } }
    return write()
  })
}

// The status of the stored completion when it is this one (a retry); a refusal for a different one,
// for a lease that is not this writer's, or for a state the completion does not follow.
function replayOrRefuse(
  d: CompletionRead,
  req: CompleteRequest,
  required: DispatchStatus,
  completion: Omit<Completion, 'at'>,
): DispatchStatus | undefined {
  if (d.attempt !== req.attempt || d.lease_token !== req.leaseToken) throw leaseLost(d)
  if (d.completion) {
    const { at: _at, ...previous } = d.completion
    if (canonicalJson(previous) === canonicalJson(completion)) return previous.status
    throw new DispatchError(DispatchCode.CompletionConflict, 'a different completion is already stored', {
      status: d.status,
    })
  }
  if (!d.live || (d.status !== 'claimed' && d.status !== 'running')) throw leaseLost(d)
  if (d.status !== required)
    throw invalidState(`${wrongState(required)} (the dispatch is ${d.status})`, d.status)
  return undefined
}

const wrongState = (required: DispatchStatus) =>
  required === 'running'
    ? 'an agent exit needs a stored preflight report that answered proceed'
    : 'a setup failure must come before the preflight report'

// The stored completion (without `at`): the request's outcome with the status it leads to.
function completionOf(req: CompleteRequest): Omit<Completion, 'at'> {
  const { attempt: _a, leaseToken: _t, status: _s, ...outcome } = req
  const status = req.status === 'setup_failed' ? 'setup_failed' : req.exitCode === 0 ? 'succeeded' : 'failed'
  return { ...outcome, status }
}
