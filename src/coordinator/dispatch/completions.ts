// Completion: the agent's exit (running → succeeded | failed) or a setup failure (claimed → setup_failed),
// written once behind the fence; a retry of the same completion gets the same answer. A dispatch cancelled
// while its worker held it takes the worker's completion, whatever it says, as what it had: it stays
// cancelled, and the worker is answered so — the same answer the cancel got.
import type { CompleteRequest, CompleteResponse, Completion, DispatchStatus } from '../../contract/index.js'
import { AgentReason, canonicalJson, hasMissingProgram } from '../../contract/index.js'
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
  const required: DispatchStatus = requiredFor(req)
  // A setup failure and an agent stopped at the deadline end the dispatch for their reason.
  const reasons = completion.reason === undefined ? [] : [completion.reason]
  const write = async (): Promise<Completed | undefined> =>
    (await writeCompletion(db, id, req, required, completion, reasons))
      ? {
          answer: { id, status: completion.status },
          written: { status: completion.status, reason: completion.reason },
        }
      : undefined
  const first = required === 'cancelled' ? undefined : await write()
  if (first) return first
  return fencedWrite('this completion', async () => {
    const d = await readForCompletion(db, id)
    if (!d) throw dispatchNotFound(id)
    if (d.status === 'cancelled') return whatItHad(db, id, d, req)
    const replayed = replayOrRefuse(d, req, required, completion)
    if (replayed) return { answer: { id, status: replayed } }
    return write()
  })
}

// The worker's completion kept by a dispatch cancelled under its lease; a retry gets the same answer.
async function whatItHad(db: Orm, id: string, d: CompletionRead, req: CompleteRequest) {
  const had = { ...completionOf(req), status: 'cancelled' as const }
  if (replayOrRefuse(d, req, 'cancelled', had)) return { answer: { id, status: 'cancelled' as const } }
  const kept = await writeCompletion(db, id, req, 'cancelled', had, [])
  return kept ? { answer: { id, status: 'cancelled' as const } } : undefined
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
  if (d.status === 'cancelled') return undefined
  if (!d.live || (d.status !== 'claimed' && d.status !== 'running')) throw leaseLost(d)
  if (d.status !== required)
    throw invalidState(`${wrongState(required)} (the dispatch is ${d.status})`, d.status)
  return undefined
}

const wrongState = (required: DispatchStatus) =>
  required === 'running'
    ? 'an agent exit needs a stored preflight report that answered proceed'
    : required === 'claimed'
      ? 'a setup failure must come before the preflight report'
      : 'a cancelled completion needs a cancelled dispatch'

// The state each completion follows: an agent exit a running dispatch, a setup failure a claimed one,
// the worker's cancelled completion a cancelled one.
function requiredFor(req: CompleteRequest): DispatchStatus {
  if (req.status === 'setup_failed') return 'claimed'
  return req.status === 'cancelled' ? 'cancelled' : 'running'
}

// The stored completion (without `at`): the request's outcome with the status it leads to. A failed agent
// that used a program no requirement declares, and that was not there, failed for that reason.
function completionOf(req: CompleteRequest): Omit<Completion, 'at'> {
  const { attempt: _a, leaseToken: _t, status: _s, next: _n, ...outcome } = req
  const status = req.status ?? (req.exitCode === 0 && req.reason === undefined ? 'succeeded' : 'failed')
  const undeclared =
    status === 'failed' && req.reason === undefined && hasMissingProgram(req.undeclared)
      ? { reason: AgentReason.UndeclaredRequirement }
      : {}
  return { ...outcome, status, ...undeclared }
}
