// What an orchestrator sets on a dispatch to steer it — its priority and its own references (metadata) —
// and how it waits for one: the long-poll of GET /v1/dispatches/{id} and the event stream.
import { z } from 'zod'

export { FAILURE_STATUSES, FINAL_STATUSES, isFinal } from './final.js'

// Claims take the highest priority first; see docs/dispatches.md for the bound on waiting.
export const PRIORITY_MIN = -100
export const PRIORITY_MAX = 100
export const Priority = z
  .number()
  .int()
  .min(PRIORITY_MIN)
  .max(PRIORITY_MAX)
  .describe(`claims take the highest first (${PRIORITY_MIN} to ${PRIORITY_MAX}, default 0), then the oldest`)

// Metadata: at most 16 keys of 1-64 letters, digits and "._-" (starting with a letter or digit), each
// value a string of at most 256 bytes (UTF-8), without NUL.
export const METADATA_MAX_KEYS = 16
export const METADATA_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const METADATA_VALUE_MAX_BYTES = 256
const KEY_MESSAGE = 'a metadata key is 1-64 of letters, digits, "._-", starting with a letter or digit'

export const MetadataKey = z.string().regex(METADATA_KEY, KEY_MESSAGE)
export const MetadataValue = z
  .string()
  .refine((v) => Buffer.byteLength(v) <= METADATA_VALUE_MAX_BYTES, {
    message: `a metadata value is at most ${METADATA_VALUE_MAX_BYTES} bytes`,
  })
  .refine((v) => !v.includes('\0'), 'must not contain NUL')
export const Metadata = z
  .record(MetadataKey, MetadataValue)
  .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, {
    message: `metadata holds at most ${METADATA_MAX_KEYS} keys`,
  })
  .describe(
    `the orchestrator's own references: at most ${METADATA_MAX_KEYS} keys (1-64 of letters, digits, "._-"), string values of at most ${METADATA_VALUE_MAX_BYTES} bytes`,
  )
export type Metadata = z.infer<typeof Metadata>

// GET /v1/dispatches?metadata.<key>=<value>: the query parameters that filter on metadata, as a map.
export const METADATA_PARAM = 'metadata.'
export function metadataFilter(query: Record<string, unknown>): Metadata | undefined {
  const pairs = Object.entries(query).filter(([name]) => name.startsWith(METADATA_PARAM))
  if (pairs.length === 0) return undefined
  return Object.fromEntries(pairs.map(([name, value]) => [name.slice(METADATA_PARAM.length), String(value)]))
}

// Checks the metadata.<key> parameters of a query whose other parameters its schema knows (`known`):
// each key as metadata takes it, given once, and at most METADATA_MAX_KEYS of them.
export function checkMetadataParams(
  query: Record<string, unknown>,
  known: Set<string>,
  ctx: z.RefinementCtx,
) {
  let count = 0
  for (const [name, value] of Object.entries(query)) {
    if (known.has(name)) continue
    if (!name.startsWith(METADATA_PARAM)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `unknown parameter "${name}"` })
      continue
    }
    count++
    const key = name.slice(METADATA_PARAM.length)
    if (!METADATA_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [name], message: KEY_MESSAGE })
    if (typeof value !== 'string')
      ctx.addIssue({ code: 'custom', path: [name], message: `${name} is given more than once` })
    else if (!MetadataValue.safeParse(value).success)
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `a metadata value is at most ${METADATA_VALUE_MAX_BYTES} bytes, without NUL`,
      })
  }
  if (count > METADATA_MAX_KEYS)
    ctx.addIssue({
      code: 'custom',
      path: ['metadata'],
      message: `at most ${METADATA_MAX_KEYS} metadata filters`,
    })
}

// GET /v1/dispatches/{id}?waitFor=terminal&timeoutMs=N: answer once the dispatch has ended, or at the
// timeout (capped by the coordinator, 30 s by default) with its state as it is.
export const WAIT_MAX_MS = 600_000
export const DispatchWaitQuery = z
  .strictObject({
    waitFor: z.enum(['terminal']).optional().describe('answer once the dispatch has reached a final status'),
    timeoutMs: z.coerce
      .number()
      .int()
      .min(0)
      .max(WAIT_MAX_MS)
      .optional()
      .describe('with waitFor: answer the current state after this long (capped, 30 s by default)'),
  })
  .refine((q) => q.timeoutMs === undefined || q.waitFor !== undefined, {
    path: ['timeoutMs'],
    message: 'timeoutMs goes with waitFor',
  })
export type DispatchWaitQuery = z.infer<typeof DispatchWaitQuery>
