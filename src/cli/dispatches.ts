// `preflight dispatches list|show ID|wait ID|cancel ID|watch` — the dispatches of a coordinator: listed
// newest first with why each ended (GET /v1/dispatches, following nextCursor), one in full, one once it
// has ended (long-polling GET /v1/dispatches/{id}?waitFor=terminal), a cancel, and the endings as they
// happen (long-polling GET /v1/dispatches/endings).
import { setTimeout as sleep } from 'node:timers/promises'
import {
  DispatchesQuery,
  type DispatchItem,
  type DispatchPage,
  type DispatchView,
  type EndingsPage,
  EndingsQuery,
  FAILURE_STATUSES,
  FINAL_STATUSES,
  IdPrefix,
  MAX_PAGE,
  METADATA_PARAM,
} from '../contract/index.js'
import { type Api, ApiRefusal, call, withClient } from './api.js'
import { coordinatorUrl, durationFlag, formatOf, intFlag, say, tokenFrom } from './args.js'
import { formatDispatch, formatItem, formatItems } from './dispatches-format.js'
import { UsageError } from './errors.js'
import {
  type API_FLAGS,
  type CANCEL_FLAGS,
  FILTER_FLAGS,
  type LIST_FLAGS,
  type RETRY_FLAGS,
  type Values,
  type WAIT_FLAGS,
  type WATCH_FLAGS,
} from './flags.js'
import { statusWord, stdoutColours } from './paint.js'

type ApiFlags = Values<typeof API_FLAGS>

export const apiOf = (values: { coordinator?: string | undefined; token?: string | undefined }): Api => ({
  base: coordinatorUrl(values.coordinator),
  token: tokenFrom(values.token, 'an operator or orchestrator'),
})

// The filters as the query takes them, checked with the coordinator's own schema so that a bad one
// fails here with the flag's name.
function queryOf(
  values: Record<string, string | string[] | boolean | undefined>,
  schema: typeof DispatchesQuery | typeof EndingsQuery,
): URLSearchParams {
  const given: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(values))
    if ((name in FILTER_FLAGS || name === 'until') && value !== undefined && typeof value !== 'boolean')
      given[name] = value
  // --metadata key=value: the parameter metadata.key=value
  const metadata = values.metadata
  for (const pair of Array.isArray(metadata) ? metadata : []) {
    const at = pair.indexOf('=')
    if (at < 1) throw new UsageError(`--metadata "${pair}" is not key=value`)
    const name = `${METADATA_PARAM}${pair.slice(0, at)}`
    if (name in given) throw new UsageError(`--metadata ${pair.slice(0, at)} is given more than once`)
    given[name] = pair.slice(at + 1)
  }
  const parsed = schema.safeParse(given)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const flag = String(issue?.path[0] ?? 'filter')
    if (flag.startsWith(METADATA_PARAM) || flag === 'metadata')
      throw new UsageError(`--metadata ${flag.slice(METADATA_PARAM.length)}: ${issue?.message ?? 'invalid'}`)
    // a repeated flag's issue names which one
    const value = given[flag]
    const bad = Array.isArray(value) ? value[Number(issue?.path[1] ?? 0)] : value
    throw new UsageError(`--${flag} "${bad ?? ''}" is not valid: ${issue?.message ?? 'invalid'}`)
  }
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(given))
    for (const one of Array.isArray(value) ? value : [value]) query.append(name, one)
  return query
}

export async function list(values: Values<typeof LIST_FLAGS>): Promise<number> {
  const format = formatOf(values.format)
  const query = queryOf(values, DispatchesQuery)
  const api = apiOf(values)
  const limit = intFlag(values.limit, 'limit', 1, 10_000_000)
  const items: DispatchItem[] = []
  let cursor: string | null = null
  do {
    const page: URLSearchParams = new URLSearchParams(query)
    page.set('limit', String(limit === undefined ? MAX_PAGE : Math.min(MAX_PAGE, limit - items.length)))
    if (cursor !== null) page.set('cursor', cursor)
    const got: DispatchPage = await call<DispatchPage>(api, 'GET', 'v1/dispatches', page)
    items.push(...got.items)
    cursor = got.nextCursor
  } while (cursor !== null && (limit === undefined || items.length < limit))
  process.stdout.write(
    format === 'json' ? `${JSON.stringify(items, null, 2)}\n` : formatItems(items, stdoutColours()),
  )
  return 0
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// A whole id as it is; the start of one (4 or more hex digits, as the operator page and `list` shorten
// them) as the one dispatch whose id starts so — none, or several (named), is bad input.
export async function resolveId(api: Api, text: string): Promise<string> {
  if (UUID.test(text)) return text
  const prefix = IdPrefix.safeParse(text)
  if (!prefix.success)
    throw new UsageError(`"${text}" is not a dispatch id (a UUID, or its first 4 or more hex digits)`)
  const query = new URLSearchParams({ idPrefix: prefix.data, limit: '10' })
  const page = await call<DispatchPage>(api, 'GET', 'v1/dispatches', query)
  const [only, ...others] = page.items
  if (!only) throw new UsageError(`no dispatch id starts with "${text}"`)
  if (others.length > 0) {
    const ids = page.items.map((item) => item.id).join(', ')
    throw new UsageError(
      `"${text}" starts ${page.nextCursor ? 'more than 10' : page.items.length} dispatch ids (${ids}): give more of it`,
    )
  }
  return only.id
}

export async function show(values: ApiFlags, idText: string): Promise<number> {
  const format = formatOf(values.format)
  const api = apiOf(values)
  const id = await resolveId(api, idText)
  const view = await call<DispatchView>(api, 'GET', `v1/dispatches/${id}`)
  process.stdout.write(
    format === 'json' ? `${JSON.stringify(view, null, 2)}\n` : formatDispatch(view, stdoutColours()),
  )
  return 0
}

// Prints the dispatch once it has ended (as show does); exit 0 when it succeeded, 1 when it ended
// otherwise, 3 when --timeout-ms passed first (it is printed as it stands).
export async function wait(values: Values<typeof WAIT_FLAGS>, idText: string): Promise<number> {
  const format = formatOf(values.format)
  const timeoutMs = durationFlag(values['timeout-ms'], 'timeout-ms', 0, 2_147_483_647)
  const wait = timeoutMs === undefined ? {} : { timeoutMs }
  const api = apiOf(values)
  const id = await resolveId(api, idText)
  const view = await withClient(api, (client) => client.waitForDispatch(id, wait))
  process.stdout.write(
    format === 'json' ? `${JSON.stringify(view, null, 2)}\n` : formatDispatch(view, stdoutColours()),
  )
  return view.status === 'succeeded' ? 0 : FINAL_STATUSES.has(view.status) ? 1 : 3
}

// A cancel the coordinator refuses (it has ended, no such dispatch) is one line and exit 1.
export async function cancel(values: Values<typeof CANCEL_FLAGS>, idText: string): Promise<number> {
  const format = formatOf(values.format)
  const api = { base: coordinatorUrl(values.coordinator), token: tokenFrom(values.token, 'an orchestrator') }
  const id = await resolveId(api, idText)
  const body = values.why === undefined ? {} : { reason: values.why }
  try {
    const done = await withClient(api, (client) => client.cancelDispatch(id, body))
    process.stdout.write(
      format === 'json'
        ? `${JSON.stringify(done)}\n`
        : `${done.id}  ${statusWord(stdoutColours(), done.status)}\n`,
    )
    return 0
  } catch (err) {
    if (!(err instanceof ApiRefusal) || (err.status !== 404 && err.status !== 409)) throw err
    say(`dispatch ${id} was not cancelled: ${err.message.replace(/^the coordinator answered /, '')}`)
    return 1
  }
}

// A new dispatch of an ended one: prints its id (json: the coordinator's answer). A retry the coordinator
// refuses (no such dispatch, it has not ended) is one line and exit 1.
export async function retry(values: Values<typeof RETRY_FLAGS>, idText: string): Promise<number> {
  const format = formatOf(values.format)
  const api = { base: coordinatorUrl(values.coordinator), token: tokenFrom(values.token, 'an orchestrator') }
  const id = await resolveId(api, idText)
  const key = values['idempotency-key']
  try {
    const made = await withClient(api, (client) =>
      client.retryDispatch(id, key === undefined ? {} : { idempotencyKey: key }),
    )
    process.stdout.write(format === 'json' ? `${JSON.stringify(made)}\n` : `${made.id}\n`)
    return 0
  } catch (err) {
    if (!(err instanceof ApiRefusal) || (err.status !== 404 && err.status !== 409)) throw err
    say(`dispatch ${id} was not queued again: ${err.message.replace(/^the coordinator answered /, '')}`)
    return 1
  }
}

// Prints each dispatch as it ends (text: a block each; json: one object a line) until stopped, or after
// --count of them. A coordinator that is away (unreachable, 503) is asked again every second.
export async function watch(values: Values<typeof WATCH_FLAGS>): Promise<number> {
  const format = formatOf(values.format)
  const query = queryOf({ ...values, status: values.status ?? [...FAILURE_STATUSES] }, EndingsQuery)
  const api = apiOf(values)
  const count = intFlag(values.count, 'count', 1, 10_000_000)
  const colour = stdoutColours()
  const stop = new AbortController()
  const quit = () => stop.abort()
  process.once('SIGINT', quit).once('SIGTERM', quit)
  let printed = 0
  let away = false
  try {
    while (!stop.signal.aborted && (count === undefined || printed < count)) {
      try {
        const page = await call<EndingsPage>(
          api,
          'GET',
          'v1/dispatches/endings',
          withWait(query),
          stop.signal,
        )
        away = false
        query.delete('since')
        query.set('cursor', page.nextCursor)
        for (const item of page.items.slice(0, count === undefined ? undefined : count - printed)) {
          process.stdout.write(
            format === 'json' ? `${JSON.stringify(item)}\n` : formatItem(item, 'ended', colour),
          )
          printed++
        }
      } catch (err) {
        if (stop.signal.aborted) break
        if (!isTransient(err)) throw err
        if (!away) say(`${err instanceof Error ? err.message : err}; asking again every second`)
        away = true
        await sleep(1_000, undefined, { signal: stop.signal }).catch(() => {})
      }
    }
    return 0
  } finally {
    process.off('SIGINT', quit).off('SIGTERM', quit)
  }
}

// The coordinator caps the wait (30 s by default) and its deadline starts after it.
const withWait = (query: URLSearchParams) => {
  const q = new URLSearchParams(query)
  q.set('waitMs', '25000')
  return q
}

const isTransient = (err: unknown) =>
  !(err instanceof UsageError) && (!(err instanceof ApiRefusal) || err.status >= 500 || err.status === 429)
