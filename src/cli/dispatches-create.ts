// `preflight dispatches create --subagent NAME (--repo URL | --path DIR) …` — queues a dispatch over
// POST /v1/dispatches and prints its id (the same id again for an idempotency key already used); with
// --wait it then waits for the end as `dispatches wait` does, with its output and exit codes.
import {
  CreateDispatchRequest,
  MAX_DISPATCH_TIMEOUT_MS,
  MetadataKey,
  PRIORITY_MAX,
  PRIORITY_MIN,
} from '../contract/index.js'
import { withStatus } from './api.js'
import { coordinatorUrl, formatOf, intFlag, say, tokenFrom } from './args.js'
import { wait } from './dispatches.js'
import { formatDuration, parseDuration } from './duration.js'
import { UsageError } from './errors.js'
import type { CREATE_FLAGS, Values } from './flags.js'

type CreateFlags = Values<typeof CREATE_FLAGS>

export async function create(values: CreateFlags): Promise<number> {
  const format = formatOf(values.format)
  const request = requestOf(values)
  const api = { base: coordinatorUrl(values.coordinator), token: tokenFrom(values.token, 'an orchestrator') }
  const { body, status } = await withStatus(api, (client) => client.createDispatch(request), {
    what: 'the dispatch',
    // 409: the idempotency key was used for another request; 422: no subagent of that name
    faults: [409, 422],
  })
  const created = status === 201
  if (!created) say(`dispatch ${body.id} was created earlier with this idempotency key`)
  if (values.wait) {
    if (format === 'text') process.stdout.write(`${body.id}\n`)
    return wait({ coordinator: values.coordinator, token: values.token, format }, body.id)
  }
  process.stdout.write(format === 'json' ? `${JSON.stringify({ ...body, created })}\n` : `${body.id}\n`)
  return 0
}

// The request body, checked with the coordinator's own schema so that a bad value is refused here
// with the name of its flag.
export function requestOf(values: CreateFlags): CreateDispatchRequest {
  if (values.subagent === undefined) throw new UsageError('--subagent NAME is required')
  if (values.repo === undefined && values.path === undefined)
    throw new UsageError('give the workspace: --repo URL, or --path DIR on the worker')
  const given = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>
  const body = {
    subagent: values.subagent,
    workspace: {
      ...given('repo', values.repo),
      ...given('ref', values.ref),
      ...given('setup', values.setup),
      ...given('path', values.path),
    },
    ...given('idempotencyKey', values['idempotency-key']),
    ...given('labels', values.label),
    ...given('priority', intFlag(values.priority, 'priority', PRIORITY_MIN, PRIORITY_MAX)),
    ...given('metadata', values.metadata && metadataOf(values.metadata)),
    ...(values.deadline === undefined ? {} : deadlineOf(values.deadline)),
  }
  const parsed = CreateDispatchRequest.safeParse(body)
  if (parsed.success) return body as CreateDispatchRequest
  const issue = parsed.error.issues[0]
  const path = issue?.path ?? []
  const flag = FLAGS[path[0] === 'workspace' ? `workspace.${String(path[1])}` : String(path[0])]
  const value =
    // never the repository's value: a URL may hold a password (the schema's message says so without it)
    flag === '--repo' ? undefined : valueAt(body, path)
  throw new UsageError(
    `${flag ?? 'the dispatch'}${value === undefined ? '' : ` "${value}"`} is not valid: ${issue?.message ?? 'invalid'}`,
  )
}

// The request's fields by the flags that set them.
const FLAGS: Record<string, string> = {
  subagent: '--subagent',
  'workspace.repo': '--repo',
  'workspace.ref': '--ref',
  'workspace.setup': '--setup',
  'workspace.path': '--path',
  idempotencyKey: '--idempotency-key',
  labels: '--label',
  priority: '--priority',
  metadata: '--metadata',
  deadline: '--deadline',
  timeoutMs: '--deadline',
}

// --metadata key=value, repeatable: each key once.
function metadataOf(pairs: string[]): Record<string, string> {
  const metadata: Record<string, string> = {}
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    if (at < 1) throw new UsageError(`--metadata "${pair}" is not KEY=VALUE`)
    const key = pair.slice(0, at)
    // checked here: the record's schema says only "Invalid key in record"
    const problem = MetadataKey.safeParse(key).error?.issues[0]?.message
    if (problem) throw new UsageError(`--metadata "${key}" is not valid: ${problem}`)
    if (Object.hasOwn(metadata, key)) throw new UsageError(`--metadata ${key} is given more than once`)
    metadata[key] = pair.slice(at + 1)
  }
  return metadata
}

// An instant (deadline), or a duration with a unit from now (timeoutMs: the coordinator's clock counts).
function deadlineOf(text: string): { deadline: string } | { timeoutMs: number } {
  const ms = parseDuration(text, { bare: false })
  if (ms === undefined) return { deadline: text }
  if (ms < 1 || ms > MAX_DISPATCH_TIMEOUT_MS)
    throw new UsageError(
      `--deadline must be a duration from 1ms to ${formatDuration(MAX_DISPATCH_TIMEOUT_MS)}, got "${text}"`,
    )
  return { timeoutMs: ms }
}

// The string at `path` in the body, when there is one there.
function valueAt(body: unknown, path: readonly PropertyKey[]): string | undefined {
  let at = body
  for (const key of path) at = (at as Record<PropertyKey, unknown> | undefined)?.[key]
  return typeof at === 'string' ? at : undefined
}
