// `preflight/client`: the coordinator's HTTP API as typed calls, one per operationId of /openapi.json,
// over the contract's types. Bearer token, the error envelope as ApiError, and retries with backoff for
// the calls that may be sent again (network errors, 5xx and 429 only, within a time budget).

import { ErrorCode } from '../contract/errors.js'
import { isFinal } from '../contract/final.js'
import type {
  CancelRequest,
  ClaimRequest,
  ClaimResponse,
  CompleteRequest,
  CompleteResponse,
  CreateDispatchRequest,
  CreateWebhookRequest,
  DeliveriesQuery,
  DeliveryPage,
  DispatchCreated,
  DispatchesQuery,
  DispatchPage,
  DispatchView,
  EndingsPage,
  EndingsQuery,
  ErrorBody,
  EventRecorded,
  Fence,
  HeartbeatResponse,
  PreflightDecision,
  PreflightReport,
  ReportPage,
  ReportsQuery,
  RetryRequest,
  SubagentDefinition,
  SubagentRegistered,
  SubagentVersionView,
  SummaryPage,
  SummaryQuery,
  TokenCreate,
  TokenCreated,
  TokenPage,
  TokensQuery,
  TokenView,
  WebhookCreated,
  WebhookList,
} from '../contract/index.js'
import { type Answer, nodeTransport, type Send } from './transport.js'

export interface RetryPolicy {
  // total time a call keeps retrying before it gives up
  budgetMs: number
  baseMs: number
  maxDelayMs: number
}

// The worker's: ten minutes of tries, 200 ms doubling up to 10 s between them.
export const DEFAULT_RETRY: RetryPolicy = { budgetMs: 10 * 60_000, baseMs: 200, maxDelayMs: 10_000 }

// The dispatch and step a retried write was for.
export interface RetryAbout {
  dispatchId: string
  attempt: number
  step: string
}

// `failures`: how many tries of this call failed so far.
export type OnRetry = (what: string, failures: number, err: unknown, about?: RetryAbout) => void

export interface ClientOptions {
  // the coordinator's base URL, e.g. http://127.0.0.1:8080
  url: string | URL
  token: string
  // false: one try per call
  retry?: RetryPolicy | false
  onRetry?: OnRetry
  // another fetch (a proxy's, or an app's own `request`)
  fetch?: (input: string, init: RequestInit) => Promise<Response>
}

export interface CallOptions {
  signal?: AbortSignal
  // false: one try, also for a call that may be sent again
  retry?: boolean
  about?: RetryAbout
}

export { ErrorCode }

// The code of an error answer that carried no envelope.
export const HTTP_ERROR = 'http-error'
// One of the contract's codes; a newer coordinator may send one this client does not know yet.
export type ApiErrorCode = ErrorCode | typeof HTTP_ERROR | (string & {})

// The coordinator answered with an error: its status, the envelope's stable code (HTTP_ERROR when the
// answer had none) and message (`said`). The error's message is `METHOD /path: status said`.
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    readonly said: string,
    readonly details?: unknown,
    what = '',
  ) {
    super(`${what ? `${what}: ` : ''}${status} ${said}`)
  }
}

// A fenced write answered 409: another attempt holds the dispatch now.
export class LeaseLostError extends ApiError {
  override name = 'LeaseLostError'
  constructor(said: string, code: ApiErrorCode = ErrorCode.LeaseLost, what = '') {
    super(409, code, said, undefined, what)
  }
}

// No answer: the coordinator could not be reached, or the connection dropped.
export class NetworkError extends Error {
  override name = 'NetworkError'
  constructor(
    what: string,
    readonly base: string,
    // the socket's code (ECONNREFUSED…) or the failure's message
    readonly why: string,
  ) {
    super(`${what}: cannot reach the coordinator at ${base}: ${why}`)
  }
}

// Worth sending again: no answer, a 5xx or a 429.
export const isRetryable = (err: unknown): boolean =>
  err instanceof NetworkError || (err instanceof ApiError && (err.status >= 500 || err.status === 429))

// Which dispatch a fenced write is for, and the fence of its lease.
export type DispatchFence = { id: string } & Fence

type Query = Record<string, string | number | boolean | readonly string[] | undefined>
export interface RequestParts {
  query?: Query | undefined
  body?: unknown
}

// Another fetch, as the transport: it follows no redirect either (the token goes nowhere else).
function viaFetch(fetch: NonNullable<ClientOptions['fetch']>): Send {
  return async (url, sent) => {
    const res = await fetch(url, { ...sent, redirect: 'manual' })
    return { status: res.status, location: res.headers.get('location'), text: () => res.text() }
  }
}

export function createClient(opts: ClientOptions) {
  const base = String(opts.url).replace(/\/+$/, '')
  const send = opts.fetch ? viaFetch(opts.fetch) : nodeTransport()

  // One request; the answer's JSON (undefined for 204), else ApiError or NetworkError.
  async function once<T>(method: string, path: string, req: RequestParts, signal?: AbortSignal): Promise<T> {
    const what = `${method} ${path}`
    let res: Answer
    try {
      res = await send(`${base}${path}${search(req.query)}`, {
        method,
        headers: {
          authorization: `Bearer ${opts.token}`,
          accept: 'application/json',
          ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        ...(signal ? { signal } : {}),
      })
    } catch (err) {
      if (signal?.aborted) throw err
      // fetch's failure says why in its cause; node:http's is the reason itself
      const cause = ((err as { cause?: unknown }).cause ?? err) as { code?: string; message?: string }
      throw new NetworkError(what, base, String(cause.code ?? cause.message ?? err))
    }
    if (res.status === 204) return undefined as T
    // never followed, and never sent again: the address is wrong, not busy
    if (res.status >= 300 && res.status < 400) {
      const to = res.location ? ` to ${res.location}` : ''
      const said = `redirected${to}: give the client the coordinator's own address (it follows no redirect)`
      throw new ApiError(res.status, HTTP_ERROR, said, undefined, what)
    }
    const text = await res.text().catch(() => '')
    const json = jsonOrUndefined(text)
    if (res.status >= 200 && res.status < 300) return json as T
    const error = (json as ErrorBody | undefined)?.error
    throw new ApiError(
      res.status,
      error?.code ?? HTTP_ERROR,
      error?.message ?? text.slice(0, 200),
      (error as { details?: unknown } | undefined)?.details,
      what,
    )
  }

  // `retry`: whether this call may be sent again (the caller's CallOptions can only say no).
  function request<T>(
    method: string,
    path: string,
    req: RequestParts = {},
    call: CallOptions = {},
    retry = true,
  ) {
    const policy = opts.retry ?? DEFAULT_RETRY
    const go = () => once<T>(method, path, req, call.signal)
    if (!retry || call.retry === false || policy === false) return go()
    return withRetry(go, policy, `${method} ${path}`, call, opts.onRetry)
  }

  // A fenced write: its 409 is LeaseLostError. Replays are answered from what was stored: always retried.
  async function fenced<T>(
    f: DispatchFence,
    method: string,
    tail: string,
    body: object,
    call: CallOptions = {},
  ) {
    const path = `/v1/dispatches/${seg(f.id)}/${tail}`
    try {
      return await request<T>(
        method,
        path,
        { body: { attempt: f.attempt, leaseToken: f.leaseToken, ...body } },
        call,
      )
    } catch (err) {
      if (err instanceof ApiError && err.status === 409)
        throw new LeaseLostError(err.said, err.code, `${method} ${path}`)
      throw err
    }
  }

  return {
    // any route, with the token and the errors of the calls below; a GET is retried, anything else is one try
    request: <T>(method: string, path: string, req?: RequestParts, call?: CallOptions) =>
      request<T>(method, path, req, call, method === 'GET'),
    getLiveness: (call?: CallOptions) => request<{ status: 'ok' }>('GET', '/healthz', {}, call),
    getReadiness: (call?: CallOptions) =>
      request<{ status: 'ok' | 'unavailable'; database?: string }>('GET', '/readyz', {}, call),

    // orchestrator: registering the same definition again changes nothing
    registerSubagent: (definition: SubagentDefinition, call?: CallOptions) =>
      request<SubagentRegistered>('POST', '/v1/subagents', { body: definition }, call),
    getSubagent: (name: string, version?: number, call?: CallOptions) =>
      request<SubagentVersionView>('GET', `/v1/subagents/${seg(name)}`, { query: { version } }, call),
    // sent again only with an idempotencyKey (without one, a retry could queue it twice)
    createDispatch: (body: CreateDispatchRequest, call?: CallOptions) =>
      request<DispatchCreated>('POST', '/v1/dispatches', { body }, call, body.idempotencyKey !== undefined),
    // metadata filters as their parameters: { 'metadata.task': 'T-1' }
    listDispatches: (
      query: Partial<DispatchesQuery> & Record<`metadata.${string}`, string> = {},
      call?: CallOptions,
    ) => request<DispatchPage>('GET', '/v1/dispatches', { query: query as Query }, call),
    // long-poll: waits up to query.waitMs for a dispatch to end
    listEndings: (query: Partial<EndingsQuery> = {}, call?: CallOptions) =>
      request<EndingsPage>('GET', '/v1/dispatches/endings', { query }, call),
    getDispatch: (id: string, call?: CallOptions) =>
      request<DispatchView>('GET', `/v1/dispatches/${seg(id)}`, {}, call),
    // The dispatch once it has reached a final status, by long-polls of getDispatch ?waitFor=terminal
    // (each at most `pollMs`, 25 s by default: the coordinator caps one at 30 s); after `timeoutMs`
    // (default: no limit) as it stands, not final.
    waitForDispatch: async (id: string, opts: WaitOptions = {}): Promise<DispatchView> => {
      const deadline = Date.now() + (opts.timeoutMs ?? Number.POSITIVE_INFINITY)
      for (;;) {
        const timeoutMs = Math.round(Math.max(0, Math.min(opts.pollMs ?? 25_000, deadline - Date.now())))
        const query = { waitFor: 'terminal', timeoutMs }
        const view = await request<DispatchView>('GET', `/v1/dispatches/${seg(id)}`, { query }, opts)
        if (isFinal(view.status) || Date.now() >= deadline) return view
      }
    },
    // a retry answers the same (the first cancel's who and why are kept)
    cancelDispatch: (id: string, body: CancelRequest = {}, call?: CallOptions) =>
      request<DispatchCreated>('POST', `/v1/dispatches/${seg(id)}/cancel`, { body }, call),
    // a new dispatch of an ended one's definition version and workspace; sent again only with an
    // idempotencyKey (without one, a retry of the call could queue it twice)
    retryDispatch: (id: string, body: RetryRequest = {}, call?: CallOptions) =>
      request<DispatchCreated>(
        'POST',
        `/v1/dispatches/${seg(id)}/retry`,
        { body },
        call,
        body.idempotencyKey !== undefined,
      ),

    // worker. A claim is one try: undefined when nothing was claimable within waitMs.
    claimDispatch: (body: ClaimRequest, call?: CallOptions) =>
      request<ClaimResponse | undefined>('POST', '/v1/worker/claim', { body }, call, false),
    // one try: a lease keeper beats again on its next tick
    renewLease: (f: DispatchFence, call?: CallOptions) =>
      fenced<HeartbeatResponse>(f, 'POST', 'heartbeat', {}, { ...call, retry: false }),
    putPreflightReport: (f: DispatchFence, report: PreflightReport, call?: CallOptions) =>
      fenced<PreflightDecision>(f, 'PUT', 'preflight', { report }, call),
    appendEvent: (f: DispatchFence, step: string, detail?: Record<string, unknown>, call?: CallOptions) =>
      fenced<EventRecorded>(f, 'POST', 'events', { step, ...(detail ? { detail } : {}) }, call),
    completeDispatch: (
      f: DispatchFence,
      completion: Omit<CompleteRequest, keyof Fence>,
      call?: CallOptions,
    ) => fenced<CompleteResponse>(f, 'POST', 'complete', completion, call),

    // operator
    listReports: (query: Partial<ReportsQuery> = {}, call?: CallOptions) =>
      request<ReportPage>('GET', '/v1/reports', { query }, call),
    summariseReports: (query: Partial<SummaryQuery> = {}, call?: CallOptions) =>
      request<SummaryPage>('GET', '/v1/reports/summary', { query }, call),

    // admin
    listTokens: (query: Partial<TokensQuery> = {}, call?: CallOptions) =>
      request<TokenPage>('GET', '/v1/tokens', { query }, call),
    revokeToken: (id: string, call?: CallOptions) =>
      request<TokenView>('DELETE', `/v1/tokens/${seg(id)}`, {}, call),
    // one try: a retry after a lost answer would mint a second token
    createToken: (body: TokenCreate, call?: CallOptions) =>
      request<TokenCreated>('POST', '/v1/tokens', { body }, call, false),
    // one try: a retry after a lost answer would register a second webhook
    createWebhook: (body: CreateWebhookRequest, call?: CallOptions) =>
      request<WebhookCreated>('POST', '/v1/webhooks', { body }, call, false),
    listWebhooks: (call?: CallOptions) => request<WebhookList>('GET', '/v1/webhooks', {}, call),
    // one try: a retry after a lost answer would say 404
    deleteWebhook: (id: string, call?: CallOptions) =>
      request<undefined>('DELETE', `/v1/webhooks/${seg(id)}`, {}, call, false),
    listDeliveries: (id: string, query: Partial<DeliveriesQuery> = {}, call?: CallOptions) =>
      request<DeliveryPage>('GET', `/v1/webhooks/${seg(id)}/deliveries`, { query }, call),
  }
}
export type Client = ReturnType<typeof createClient>

export interface WaitOptions extends CallOptions {
  timeoutMs?: number
  pollMs?: number
}

const seg = encodeURIComponent

// `?a=1&b=x&b=y`: undefined left out, arrays repeated.
function search(query: Query | undefined): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v))
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}

// The body as JSON; undefined when empty or not JSON (a proxy's HTML error page, say).
function jsonOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

// Exponential backoff with jitter, for network errors, 5xx and 429 only; bounded by a time budget.
async function withRetry<T>(
  fn: () => Promise<T>,
  policy: RetryPolicy,
  what: string,
  call: CallOptions,
  onRetry?: OnRetry,
): Promise<T> {
  const deadline = Date.now() + policy.budgetMs
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn()
    } catch (err) {
      if (!isRetryable(err) || call.signal?.aborted || Date.now() >= deadline) throw err
      onRetry?.(what, attempt, err, call.about)
      const delay = backoffMs(attempt, policy.baseMs, policy.maxDelayMs)
      await sleep(Math.min(delay, Math.max(0, deadline - Date.now())), call.signal)
    }
  }
}

// Exponential backoff with jitter: the nth wait is between half and all of min(max, base·2^(n-1)).
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 20))
  return cap / 2 + (Math.random() * cap) / 2
}

// Resolves after `ms`, or at once when `signal` aborts.
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
