// ApiError: a failure with an HTTP status and a stable code, rendered by the app's one onError.
export const ErrorCode = {
  InvalidRequest: 'invalid-request',
  InvalidCursor: 'invalid-cursor',
  MalformedJson: 'malformed-json',
  InvalidValue: 'invalid-value',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  NotFound: 'not-found',
  LeaseLost: 'lease-lost',
  InvalidState: 'invalid-state',
  ReportConflict: 'report-conflict',
  CompletionConflict: 'completion-conflict',
  IdempotencyConflict: 'idempotency-conflict',
  Conflict: 'conflict',
  PayloadTooLarge: 'payload-too-large',
  UnknownSubagent: 'unknown-subagent',
  EventLimit: 'event-limit',
  RateLimited: 'rate-limited',
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
