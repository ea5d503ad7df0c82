// Orchestrators' decisions on dispatches: an idempotent create (a reused key must name the same
// request), a cancel that a retry may repeat, and a retry of an ended dispatch (a new one, idempotent by key).
import type {
  Cancellation,
  CreateDispatchRequest,
  DispatchCreated,
  RetryRequest,
} from '../../contract/index.js'
import { canonicalJson, isFinal } from '../../contract/index.js'
import type { Orm } from '../db/client.js'
import * as rows from '../db/dispatches.js'
import { DispatchCode, DispatchError, dispatchNotFound, invalidState } from './errors.js'

export interface Creation {
  dispatch: DispatchCreated
  created: boolean
}

// Queues a dispatch; with an idempotency key already used for the same request, answers that one.
export async function createDispatch(
  db: Orm,
  req: CreateDispatchRequest,
  opts: { maxAttempts: number; notify: boolean },
): Promise<Creation> {
  const inserted = await rows.insertDispatch(db, req, opts)
  if (inserted) return { dispatch: inserted, created: true }
  if (req.idempotencyKey !== undefined) {
    const existing = await rows.findByKey(db, req.idempotencyKey)
    if (existing) return { dispatch: sameRequestOrThrow(existing, req), created: false }
  }
  throw new DispatchError(DispatchCode.UnknownSubagent, `no subagent named "${req.subagent}" is registered`)
}

// A reused key must name the same request: a different one is a client bug, not a retry.
function sameRequestOrThrow(row: rows.KeyedRow, req: CreateDispatchRequest): DispatchCreated {
  const same =
    row.subagent_name === req.subagent &&
    canonicalJson(row.workspace) === canonicalJson(req.workspace) &&
    canonicalJson(row.labels ?? null) === canonicalJson(req.labels ?? null) &&
    row.priority === (req.priority ?? 0) &&
    canonicalJson(row.metadata ?? null) === canonicalJson(req.metadata ?? null)
  if (!same) {
    throw new DispatchError(
      DispatchCode.IdempotencyConflict,
      'this idempotencyKey was used for a different dispatch',
      { id: row.id },
    )
  }
  return { id: row.id, status: row.status }
}

// queued, claimed or running → cancelled; cancelling a cancelled dispatch answers the same (a retry,
// which keeps the first cancel's who and why). One that ended otherwise is refused with its status:
// a completion that won a race with the cancel is what both sides see. `ended`: this cancel ended it.
export async function cancelDispatch(
  db: Orm,
  id: string,
  cancel: Omit<Cancellation, 'at'>,
): Promise<{ answer: DispatchCreated; ended: boolean }> {
  const cancelled = await rows.cancelDispatch(db, id, cancel)
  if (cancelled) return { answer: cancelled, ended: true }
  const current = await rows.findDispatchState(db, id)
  if (!current) throw dispatchNotFound(id)
  if (current.status === 'cancelled')
    return { answer: { id: current.id, status: current.status }, ended: false }
  throw invalidState(`the dispatch has ended (${current.status}) and cannot be cancelled`, current.status)
}

// A new dispatch of an ended one's subagent version and workspace (labels, priority and metadata too).
// One not ended is refused with its status: cancel it first, or wait for it. With an idempotency key
// already used for a dispatch of that same version and workspace, answers that one.
export async function retryDispatch(
  db: Orm,
  id: string,
  req: RetryRequest,
  opts: { maxAttempts: number; notify: boolean },
): Promise<Creation> {
  const inserted = await rows.insertRetry(db, id, { ...opts, idempotencyKey: req.idempotencyKey })
  if (inserted) return { dispatch: inserted, created: true }
  const source = await rows.findRequest(db, id)
  if (!source) throw dispatchNotFound(id)
  if (!isFinal(source.status))
    throw invalidState(
      `the dispatch has not ended (${source.status}): cancel it first, or wait`,
      source.status,
    )
  const existing = req.idempotencyKey === undefined ? undefined : await rows.findByKey(db, req.idempotencyKey)
  // ended and found, so only a taken key leaves the insert without a row
  if (!existing) throw new Error(`retry of ${id}: nothing inserted, and no dispatch holds the key`)
  // a key is one dispatch's: the ended one's own key names no retry of it
  if (existing.id === source.id || !sameRun(existing, source))
    throw new DispatchError(
      DispatchCode.IdempotencyConflict,
      'this idempotencyKey was used for a different dispatch',
      { id: existing.id },
    )
  return { dispatch: { id: existing.id, status: existing.status }, created: false }
}

// The same subagent version on the same workspace, with the same labels, priority and metadata.
function sameRun(a: rows.KeyedRow, b: rows.KeyedRow): boolean {
  return (
    a.subagent_name === b.subagent_name &&
    a.subagent_version === b.subagent_version &&
    canonicalJson(a.workspace) === canonicalJson(b.workspace) &&
    canonicalJson(a.labels ?? null) === canonicalJson(b.labels ?? null) &&
    a.priority === b.priority &&
    canonicalJson(a.metadata ?? null) === canonicalJson(b.metadata ?? null)
  )
}
