// Every error code an answer of the HTTP API can carry: a closed set, the `code` of the one error
// envelope `{ error: { code, message, details? } }`. The coordinator sends only these; the client and the
// worker match them by name, never by a string of their own. A newer coordinator may add a code: a
// client reads an unknown one as it is (ApiError's `code`), and 'http-error' when an answer had none.

// The dispatch decisions' refusals (coordinator/dispatch): each with its HTTP status in coordinator/http.
export const DispatchCode = {
  NotFound: 'not-found',
  LeaseLost: 'lease-lost',
  InvalidState: 'invalid-state',
  ReportConflict: 'report-conflict',
  CompletionConflict: 'completion-conflict',
  IdempotencyConflict: 'idempotency-conflict',
  UnknownSubagent: 'unknown-subagent',
  EventLimit: 'event-limit',
  Cancelled: 'cancelled',
} as const
export type DispatchCode = (typeof DispatchCode)[keyof typeof DispatchCode]

// The dispatch decisions' codes, and those of requests and of the service.
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

export const ERROR_CODES = Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]
