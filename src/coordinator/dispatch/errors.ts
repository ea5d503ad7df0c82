// Refusals of the dispatch decisions: a stable code, a message for people, the details a client acts on.
// They say nothing of HTTP: http/errors.ts gives each code its status in the app's one onError.
import { DispatchCode, type DispatchStatus } from '../../contract/index.js'

export { DispatchCode }

export class DispatchError extends Error {
  override name = 'DispatchError'
  constructor(
    readonly code: DispatchCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message)
  }
}

export const dispatchNotFound = (id: string) =>
  new DispatchError(DispatchCode.NotFound, `dispatch ${id} not found`)

// A worker write whose (attempt, lease token) no longer holds the dispatch; details say who does.
// A cancelled dispatch says so with its own code: the worker stops, and writes only its completion.
export const leaseLost = (d: { status: DispatchStatus; attempt: number }) =>
  d.status === 'cancelled'
    ? new DispatchError(DispatchCode.Cancelled, 'the dispatch was cancelled', {
        status: d.status,
        attempt: d.attempt,
      })
    : new DispatchError(DispatchCode.LeaseLost, 'this lease no longer holds the dispatch', {
        status: d.status,
        attempt: d.attempt,
      })

// The state forbids the write (details: the state it is in).
export const invalidState = (message: string, status: DispatchStatus) =>
  new DispatchError(DispatchCode.InvalidState, message, { status })
