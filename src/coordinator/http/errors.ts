// ApiError: a failure with an HTTP status and a stable code, rendered by the app's one onError; the
// status of each refusal the dispatch decisions make (dispatch/errors.ts).
import { DispatchCode, type DispatchError } from '../dispatch/errors.js'

// every code an answer may carry: the dispatch decisions' own, and those of requests and of the service
export const ErrorCode = {
  ...DispatchCode,
  InvalidRequest: 'invalid-request',
  InvalidCursor: 'invalid-cursor',
  InvalidMetadata: 'invalid-metadata',
  MalformedJson: 'malformed-json',
  InvalidValue: 'invalid-value',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  Conflict: 'conflict',
  TooManyWebhooks: 'too-many-webhooks',
  PayloadTooLarge: 'payload-too-large',
  RateLimited: 'rate-limited',
  ConcurrencyLimit: 'concurrency-limit',
  Timeout: 'timeout',
  Unavailable: 'unavailable',
  Internal: 'internal',
} as const
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

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
