// The worker's calls to the coordinator, on preflight/client: fenced writes retried with backoff until
// they land, the budget is spent, or the dispatch is given up; 409 = LeaseLostError (lease lost).
import {
  ApiError,
  type ClientOptions,
  createClient,
  type DispatchFence,
  ErrorCode,
  LeaseLostError,
  type RetryAbout,
} from '../src/client/index.js'
import type {
  AgentExit,
  CancelledExit,
  CompleteRequest,
  PreflightReport,
  SetupFailure,
} from '../src/contract/index.js'

export {
  ApiError,
  backoffMs,
  type DispatchFence,
  isRetryable,
  LeaseLostError,
  type OnRetry,
  type RetryAbout,
  type RetryPolicy,
  sleep,
} from '../src/client/index.js'

// The coordinator refused the request (a 401 or 403 says the token will not work by trying again).
export { ApiError as RefusedError }

// An orchestrator cancelled the dispatch: a fenced write answered 409 with the code `cancelled`. Stop
// it, and write only what it had.
export class CancelledError extends LeaseLostError {
  override name = 'CancelledError'
  constructor(said: string, what = '') {
    super(said, ErrorCode.Cancelled, what)
  }
}
export const isCancelled = (err: unknown): boolean =>
  err instanceof LeaseLostError && err.code === ErrorCode.Cancelled

export type ApiOptions = Pick<ClientOptions, 'url' | 'token' | 'onRetry'> & {
  retry?: Exclude<ClientOptions['retry'], false>
}

export function createApi(opts: ApiOptions) {
  const client = createClient(opts)
  const about = (f: DispatchFence, step: string, signal?: AbortSignal) => ({
    about: { dispatchId: f.id, attempt: f.attempt, step } satisfies RetryAbout,
    ...(signal ? { signal } : {}),
  })
  return {
    // Claims are not retried here: the claim loop backs off itself, and a lost answer only costs a lease.
    // The answer is whatever arrived (undefined: nothing to claim): worker/claim.ts reads it. `labels`:
    // what this worker offers; a dispatch with labels goes only to a worker that has them all.
    claim: (
      workerId: string,
      waitMs: number,
      signal?: AbortSignal,
      labels: readonly string[] = [],
    ): Promise<unknown> =>
      client.claimDispatch(
        { workerId, waitMs, ...(labels.length > 0 ? { labels: [...labels] } : {}) },
        signal ? { signal } : {},
      ),
    // One try per tick: the lease keeper calls again on its next beat.
    heartbeat: (f: DispatchFence, signal?: AbortSignal) => client.renewLease(f, signal ? { signal } : {}),
    event: (f: DispatchFence, step: string, detail?: Record<string, unknown>, signal?: AbortSignal) =>
      client.appendEvent(f, step, detail, about(f, step, signal)),
    // The answer is whatever arrived: only lifecycle.ts decides what it means.
    report: (f: DispatchFence, report: PreflightReport, signal?: AbortSignal): Promise<unknown> =>
      client.putPreflightReport(f, report, about(f, 'report', signal)),
    // `once`: one try, for a completion that asks for the next dispatch: a retry after a lost answer
    // would claim again, and each lost answer leaves a dispatch claimed for nobody until its lease lapses
    complete: (
      f: DispatchFence,
      completion: AgentExit & Pick<CompleteRequest, 'next'>,
      signal?: AbortSignal,
      once = false,
    ) =>
      client.completeDispatch(f, completion, {
        ...about(f, 'complete', signal),
        ...(once ? { retry: false } : {}),
      }),
    // What the worker had when the dispatch was cancelled: kept by the cancelled dispatch.
    cancelled: (f: DispatchFence, had: CancelledExit, signal?: AbortSignal) =>
      client.completeDispatch(f, { status: 'cancelled', ...had }, about(f, 'cancelled', signal)),
    setupFailed: (f: DispatchFence, failure: SetupFailure, signal?: AbortSignal) =>
      client.completeDispatch(f, { status: 'setup_failed', ...failure }, about(f, 'setup-failed', signal)),
  }
}
export type Api = ReturnType<typeof createApi>
