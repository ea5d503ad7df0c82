// Calls to the coordinator's API for the operators' commands: one JSON request with the bearer token,
// its error envelope turned into one line (a 400 is the flags' fault: a UsageError, exit 2).
import type { ErrorBody } from '../contract/index.js'
import { UsageError } from './errors.js'

export interface Api {
  base: URL
  token: string
}

// An answer the coordinator refused, with its status and stable code.
export class ApiRefusal extends Error {
  override name = 'ApiRefusal'
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message)
  }
}

export async function call<T>(
  api: Api,
  method: 'GET' | 'POST',
  path: string,
  query: URLSearchParams = new URLSearchParams(),
  signal?: AbortSignal,
): Promise<T> {
  const url = new URL(path, api.base.href.endsWith('/') ? api.base : `${api.base.href}/`)
  url.search = query.toString()
  let res: Response
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${api.token}`, accept: 'application/json' },
      ...(signal ? { signal } : {}),
    })
  } catch (err) {
    if (signal?.aborted) throw err
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    throw new Error(
      `cannot reach the coordinator at ${api.base.origin}: ${cause?.code ?? cause?.message ?? err}`,
    )
  }
  const body = await res.json().catch(() => undefined)
  if (res.ok) return body as T
  const error = (body as ErrorBody | undefined)?.error
  const said = error ? `${error.code}: ${error.message}` : `HTTP ${res.status}`
  // A 400 is our request's fault (the flags); anything else is the coordinator's or the token's.
  if (res.status === 400) throw new UsageError(`the coordinator rejected the request (${said})`)
  throw new ApiRefusal(res.status, error?.code, `the coordinator answered ${res.status} (${said})`)
}

// The final statuses, as in the contract (kept here so that this function moves alone).
const FINAL = new Set(['setup_failed', 'preflight_failed', 'succeeded', 'failed', 'expired', 'cancelled'])

// Waits for a dispatch to reach its final status with long-polls of GET /v1/dispatches/{id}
// ?waitFor=terminal (each at most `pollMs`, 25 s by default: the coordinator caps one at 30 s), and
// answers it; after `timeoutMs` (default: no limit) answers it as it stands, not final.
export async function waitForDispatch<T extends { status: string }>(
  api: Api,
  id: string,
  opts: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? Number.POSITIVE_INFINITY)
  for (;;) {
    const wait = Math.max(0, Math.min(opts.pollMs ?? 25_000, deadline - Date.now()))
    const query = new URLSearchParams({ waitFor: 'terminal', timeoutMs: String(Math.round(wait)) })
    const view = await call<T>(api, 'GET', `v1/dispatches/${encodeURIComponent(id)}`, query, opts.signal)
    if (FINAL.has(view.status) || Date.now() >= deadline) return view
  }
}
