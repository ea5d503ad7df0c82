// Completion: the agent's exit (running → succeeded | failed) or a setup failure (claimed → setup_failed).
import { sql } from 'drizzle-orm'
import type { CompleteRequest, CompleteResponse, Completion, DispatchStatus } from '../contract/api.js'
import { canonicalJson } from '../contract/index.js'
import { ApiError, ErrorCode } from '../errors.js'
import type { Orm } from './client.js'
import { appendEvent } from './events.js'
import { lockFenced } from './leases.js'
import { jsonb } from './sql.js'

export async function completeDispatch(db: Orm, id: string, req: CompleteRequest): Promise<CompleteResponse> {
  return db.transaction(async (tx) => {
    const d = await lockFenced(tx, id, req)
    const completion = completionOf(req)
    if (d.completion) {
      const { at: _at, ...previous } = d.completion as Completion
      if (canonicalJson(previous) === canonicalJson(completion)) return { id, status: previous.status }
      throw new ApiError(409, ErrorCode.CompletionConflict, 'a different completion is already stored', {
        status: d.status,
      })
    }
    const required: DispatchStatus = req.status === 'setup_failed' ? 'claimed' : 'running'
    if (d.status !== required || !d.live) throw stateError(d.status, d.live, required)
    const status = completion.status
    await tx.execute(
      sql`UPDATE dispatches SET status = ${status}, updated_at = now(),
                 completion = ${jsonb(completion)} || jsonb_build_object('at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          WHERE id = ${id}`,
    )
    await appendEvent(tx, id, req.attempt, 'completed', { status })
    return { id, status }
  })
}

// The stored completion (without `at`): the request's outcome with the status it leads to.
function completionOf(req: CompleteRequest): Omit<Completion, 'at'> {
  const { attempt: _a, leaseToken: _t, status: _s, ...outcome } = req
  const status = req.status === 'setup_failed' ? 'setup_failed' : req.exitCode === 0 ? 'succeeded' : 'failed'
  return { ...outcome, status }
}

function stateError(status: DispatchStatus, live: boolean, required: DispatchStatus): ApiError {
  if (!live || (status !== 'claimed' && status !== 'running')) {
    return new ApiError(409, ErrorCode.LeaseLost, 'the lease is no longer live', { status })
  }
  const why =
    required === 'running'
      ? 'an agent exit needs a stored preflight report that answered proceed'
      : 'a setup failure must come before the preflight report'
  return new ApiError(409, ErrorCode.InvalidState, `${why} (the dispatch is ${status})`, { status })
}
