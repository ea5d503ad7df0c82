// ApiError: a failure with an HTTP status and a stable code, rendered by the app's one onError; the
// status of each refusal the dispatch decisions make (dispatch/errors.ts).
import { type DispatchCode, ErrorCode } from '../../contract/index.js'
import type { DispatchError } from '../dispatch/errors.js'

export { ErrorCode }

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 503

export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: ErrorStatus,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message)
  }
}

export const notFound = (what: string) => new ApiError(404, ErrorCode.NotFound, `${what} not found`)

const dispatchStatus = {
  'not-found': 404,
  'lease-lost': 409,
  'invalid-state': 409,
  'report-conflict': 409,
  'completion-conflict': 409,
  'idempotency-conflict': 409,
  'unknown-subagent': 422,
  'event-limit': 422,
  cancelled: 409,
} as const satisfies Record<DispatchCode, ErrorStatus>

// A dispatch decision's refusal as the client sees it: its code and details, with the code's status.
export function fromDispatchError(err: DispatchError): ApiError {
  return new ApiError(dispatchStatus[err.code], err.code, err.message, err.details)
}
