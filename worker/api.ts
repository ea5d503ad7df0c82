// HTTP client for the coordinator's worker routes: bearer token, retries with backoff, 409 = lease lost.
import type {
  AgentExit,
  CancelledExit,
  CompleteResponse,
  DispatchId,
  ErrorBody,
  EventRecorded,
  Fence,
  HeartbeatResponse,
  PreflightReport,
  SetupFailure,
} from '../src/contract/index.js'

// Which dispatch a fenced write is for (the path) and the fence of its lease (the body).
export type DispatchFence = DispatchId & Fence

// Another attempt owns the dispatch now: stop it without completing.
export class LeaseLostError extends Error {
  override name = 'LeaseLostError'
}

// An orchestrator cancelled the dispatch (409, code cancelled): stop it, and write only what it had.
export class CancelledError extends LeaseLostError {
  override name = 'CancelledError'
}

// The coordinator refused the request (a 4xx other than 409): sending it again would not help.
export class RefusedError extends Error {
  override name = 'RefusedError'
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export interface RetryPolicy {
  // total time a call keeps retrying before it gives up
  budgetMs: number
  baseMs: number
  maxDelayMs: number
}

const DEFAULT_RETRY: RetryPolicy = { budgetMs: 10 * 60_000, baseMs: 200, maxDelayMs: 10_000 }

// The dispatch and step a retried write was for.
export interface RetryAbout {
  dispatchId: string
  attempt: number
  step: string
}

// `failures`: how many tries of this call failed so far.
export type OnRetry = (what: string, failures: number, err: unknown, about?: RetryAbout) => void

export interface ApiOptions {
  url: string
  token: string
  retry?: RetryPolicy
  onRetry?: OnRetry
}

export function createApi(opts: ApiOptions) {
  const base = opts.url.replace(/\/+$/, '')
  const retry = opts.retry ?? DEFAULT_RETRY
  const call = <T>(method: string, path: string, body: unknown, signal?: AbortSignal, about?: RetryAbout) =>
    withRetry(() => send<T>(base, opts.token, method, path, body, signal), retry, {
      what: `${method} ${path}`,
      ...(signal ? { signal } : {}),
      ...(opts.onRetry ? { onRetry: opts.onRetry } : {}),
      ...(about ? { about } : {}),
    })
  const about = (f: DispatchFence, step: string): RetryAbout => ({
    dispatchId: f.id,
    attempt: f.attempt,
    step,
  })
  const fenced = (f: DispatchFence) => ({ attempt: f.attempt, leaseToken: f.leaseToken })
  const at = (f: DispatchFence, tail: string) => `/v1/dispatches/${encodeURIComponent(f.id)}/${tail}`
  return {
    // Claims are not retried here: the claim loop backs off itself, and a lost answer only costs a lease.
    // The answer is whatever arrived (undefined: nothing to claim): worker/claim.ts reads it. `labels`:
    // what this worker offers; a dispatch with labels goes only to a worker that has them all.
    claim: (workerId: string, waitMs: number, signal?: AbortSignal, labels: readonly string[] = []) =>
      send<unknown>(
        base,
        opts.token,
        'POST',
        '/v1/worker/claim',
        { workerId, waitMs, ...(labels.length > 0 ? { labels } : {}) },
        signal,
      ),
    // One try per tick: the lease keeper calls again on its next beat.
    heartbeat: (f: DispatchFence, signal?: AbortSignal) =>
      send<HeartbeatResponse>(base, opts.token, 'POST', at(f, 'heartbeat'), fenced(f), signal),
    // Fenced writes retry until they land, the budget is spent, or `signal` says the dispatch was given up.
    event: (f: DispatchFence, step: string, detail?: Record<string, unknown>, signal?: AbortSignal) =>
      call<EventRecorded>(
        'POST',
        at(f, 'events'),
        { ...fenced(f), step, ...(detail ? { detail } : {}) },
        signal,
        about(f, step),
      ),
    // The answer is whatever arrived: only lifecycle.ts decides what it means.
    report: (f: DispatchFence, report: PreflightReport, signal?: AbortSignal) =>
      call<unknown>('PUT', at(f, 'preflight'), { ...fenced(f), report }, signal, about(f, 'report')),
    complete: (f: DispatchFence, completion: AgentExit, signal?: AbortSignal) =>
      call<CompleteResponse>(
        'POST',
        at(f, 'complete'),
        { ...fenced(f), ...completion },
        signal,
        about(f, 'complete'),
      ),
    // What the worker had when the dispatch was cancelled: kept by the cancelled dispatch.
    cancelled: (f: DispatchFence, had: CancelledExit, signal?: AbortSignal) =>
      call<CompleteResponse>(
        'POST',
        at(f, 'complete'),
        { ...fenced(f), status: 'cancelled', ...had },
        signal,
        about(f, 'cancelled'),
      ),
    setupFailed: (f: DispatchFence, failure: SetupFailure, signal?: AbortSignal) =>
      call<CompleteResponse>(
        'POST',
        at(f, 'complete'),
        { ...fenced(f), status: 'setup_failed', ...failure },
        signal,
        about(f, 'setup-failed'),
      ),
  }
}
export type Api = ReturnType<typeof createApi>

class RetryableError extends Error {}

async function send<T>(
  base: string,
  token: string,
  method: string,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<T> {
  let res: Response
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    })
  } catch (err) {
    if (signal?.aborted) throw err
    throw new RetryableError(`${method} ${path}: ${err instanceof Error ? err.message : String(err)}`)
  }
  if (res.status === 204) return undefined as T
  const text = await res.text()
  const json = jsonOrUndefined(text)
  if (res.ok) return json as T
  const error = (json as ErrorBody | undefined)?.error
  const message = `${method} ${path}: ${res.status} ${error?.message ?? text.slice(0, 200)}`
  if (res.status === 409)
    throw error?.code === 'cancelled' ? new CancelledError(message) : new LeaseLostError(message)
  if (res.status >= 500 || res.status === 429) throw new RetryableError(message)
  throw new RefusedError(res.status, error?.code ?? 'http-error', message)
}

// The body as JSON; undefined when empty or not JSON (a proxy's HTML error page, say).
function jsonOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

interface RetryContext {
  what: string
  signal?: AbortSignal
  onRetry?: OnRetry
  about?: RetryAbout
}

// Exponential backoff with full jitter, for network errors, 5xx and 429 only; bounded by a time budget.
async function withRetry<T>(fn: () => Promise<T>, policy: RetryPolicy, ctx: RetryContext): Promise<T> {
  const deadline = Date.now() + policy.budgetMs
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn()
    } catch (err) {
      if (!(err instanceof RetryableError) || ctx.signal?.aborted || Date.now() >= deadline) throw err
      ctx.onRetry?.(ctx.what, attempt, err, ctx.about)
      const delay = backoffMs(attempt, policy.baseMs, policy.maxDelayMs)
      await sleep(Math.min(delay, Math.max(0, deadline - Date.now())), ctx.signal)
    }
  }
}

// Exponential backoff with jitter: the nth wait is between half and all of min(max, base·2^(n-1)).
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 20))
  return cap / 2 + (Math.random() * cap) / 2
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}
