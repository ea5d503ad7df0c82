// Calls to the coordinator's API for the operators' commands, on preflight/client (one try each): the
// error envelope turned into one line (a 400 is the flags' fault: a UsageError, exit 2).
import { ApiError, type Client, createClient, HTTP_ERROR, NetworkError } from '../client/index.js'
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

// `path` relative to the coordinator's base URL (`v1/reports`): a base with a path prefix keeps it.
export async function call<T>(
  api: Api,
  method: 'GET' | 'POST',
  path: string,
  query: URLSearchParams = new URLSearchParams(),
  signal?: AbortSignal,
): Promise<T> {
  return withClient(api, (client) =>
    client.request<T>(method, `/${path}`, { query: queryOf(query) }, signal ? { signal } : {}),
  )
}

export interface Input {
  // what the request carried, for the error: "the definition in x.yaml" (default "the request")
  what?: string
  // answers that are the input's fault as a 400 is (exit 2): a 422 for a subagent not registered, say
  faults?: readonly number[]
}

// Any call of the client, with its refusals turned into ApiRefusal / UsageError as `call` does.
export async function withClient<T>(
  api: Api,
  use: (client: Client) => Promise<T>,
  input: Input = {},
  onStatus?: (status: number) => void,
): Promise<T> {
  const seeing = async (url: string, init: RequestInit) => {
    const res = await fetch(url, init)
    onStatus?.(res.status)
    return res
  }
  try {
    return await use(createClient({ url: api.base, token: api.token, retry: false, fetch: seeing }))
  } catch (err) {
    if (err instanceof NetworkError)
      throw new Error(`cannot reach the coordinator at ${api.base.origin}: ${err.why}`)
    if (!(err instanceof ApiError)) throw err
    const envelope = err.code !== HTTP_ERROR
    const said = envelope ? `${err.code}: ${err.said}` : `HTTP ${err.status}`
    // A 400 is our request's fault (the flags, the file); anything else is the coordinator's or the token's.
    if (err.status === 400 || input.faults?.includes(err.status))
      throw new UsageError(`the coordinator rejected ${input.what ?? 'the request'} (${said})`)
    throw new ApiRefusal(
      err.status,
      envelope ? err.code : undefined,
      `the coordinator answered ${err.status} (${said})`,
    )
  }
}

// A call whose answer's status tells something its body does not (201 a new one, 200 the same as before).
export async function withStatus<T>(
  api: Api,
  use: (client: Client) => Promise<T>,
  input: Input = {},
): Promise<{ body: T; status: number }> {
  let status = 0
  const body = await withClient(api, use, input, (s) => {
    status = s
  })
  return { body, status }
}

function queryOf(params: URLSearchParams): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const key of new Set(params.keys())) out[key] = params.getAll(key)
  return out
}
