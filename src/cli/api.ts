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
