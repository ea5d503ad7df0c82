// Completion: the agent's exit (running → succeeded | failed) or a setup failure (claimed → setup_failed).
import { sql } from 'drizzle-orm'
import {
  type CompleteRequest,
  type CompleteResponse,
  type Completion,
  canonicalJson,
  type DispatchStatus,
} from '../../contract/index.js'
import { ApiError, ErrorCode, notFound } from '../http/errors.js'
import { type Orm, one, PREPARED } from './client.js'
import { leaseLost } from './leases.js'
import { iso, jsonb } from './sql.js'

interface ReadRow {
  status: DispatchStatus
  attempt: number
  lease_token: string | null
  live: boolean
  completion: Completion | null
}

// Writes status, completion and event in one statement that checks the fence and the state; only
// when it matches nothing, reads why (a retry gets the same answer, else 404/409) and tries again.
export async function completeDispatch(db: Orm, id: string, req: CompleteRequest): Promise<CompleteResponse> {
  const completion = completionOf(req)
  const required: DispatchStatus = req.status === 'setup_failed' ? 'claimed' : 'running'
  // The expected case in one round trip: its WHERE holds every check the read below makes.
  if (await writeCompletion(db, id, req, required, completion)) return { id, status: completion.status }
  for (let race = 0; race < 3; race++) {
    const d = await one<ReadRow>(
      db,
      sql`SELECT status, attempt, lease_token, completion, coalesce(lease_expires_at > now(), false) AS live
          FROM dispatches WHERE id = ${id}`,
      PREPARED,
    )
    if (!d) throw notFound(`dispatch ${id}`)
    if (d.attempt !== req.attempt || d.lease_token !== req.leaseToken) throw stateError(d, 'lease')
    if (d.completion) {
      const { at: _at, ...previous } = d.completion
      if (canonicalJson(previous) === canonicalJson(completion)) return { id, status: previous.status }
      throw new ApiError(409, ErrorCode.CompletionConflict, 'a different completion is already stored', {
        status: d.status,
      })
    }
    if (!d.live || (d.status !== 'claimed' && d.status !== 'running')) throw stateError(d, 'lease')
    if (d.status !== required) throw stateError(d, required)
    if (await writeCompletion(db, id, req, required, completion)) return { id, status: completion.status }
    // The fence no longer held when writing (a concurrent retry, the sweep, a cancel): look again.
  }
  throw new ApiError(409, ErrorCode.LeaseLost, 'the dispatch kept changing under this completion')
}

async function writeCompletion(
  db: Orm,
  id: string,
  req: CompleteRequest,
  required: DispatchStatus,
  completion: Omit<Completion, 'at'>,
): Promise<boolean> {
  const done = await one<{ id: string }>(
    db,
    sql`WITH d AS (
          UPDATE dispatches SET status = ${completion.status}, updated_at = now(),
                 completion = ${jsonb(completion)} || jsonb_build_object('at', ${iso('now()')})
          WHERE id = ${id} AND attempt = ${req.attempt} AND lease_token = ${req.leaseToken}
            AND status = ${required} AND lease_expires_at > now() AND completion IS NULL
          RETURNING id
        ), ev AS (
          INSERT INTO dispatch_events (dispatch_id, attempt, step, detail)
          SELECT id, ${req.attempt}, 'completed', ${jsonb({ status: completion.status })} FROM d
        )
        SELECT id FROM d`,
    PREPARED,
  )
  return done !== undefined
}

// The stored completion (without `at`): the request's outcome with the status it leads to.
function completionOf(req: CompleteRequest): Omit<Completion, 'at'> {
  const { attempt: _a, leaseToken: _t, status: _s, ...outcome } = req
  const status = req.status === 'setup_failed' ? 'setup_failed' : req.exitCode === 0 ? 'succeeded' : 'failed'
  return { ...outcome, status }
}

function stateError(
  d: { status: DispatchStatus; attempt: number },
  want: 'lease' | DispatchStatus,
): ApiError {
  if (want === 'lease') return leaseLost(d)
  const why =
    want === 'running'
      ? 'an agent exit needs a stored preflight report that answered proceed'
      : 'a setup failure must come before the preflight report'
  return new ApiError(409, ErrorCode.InvalidState, `${why} (the dispatch is ${d.status})`, {
    status: d.status,
  })
}
