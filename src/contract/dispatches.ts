// Wire shapes of the dispatch listing: GET /v1/dispatches (newest first, each item saying why it
// ended) and GET /v1/dispatches/endings (dispatches as they end, oldest ending first: `watch`).
import { z } from 'zod'
import { DISPATCH_STATUSES, DispatchStatus, SubagentRef } from './api.js'
import { CreatedWindow, FilterName, PageCursor, PageLimit } from './paging.js'
import { CheckStatus, Code, Outcome } from './report.js'
import { RequirementKind } from './requirements.js'
import { checkMetadataParams, Metadata, Priority } from './steering.js'
import { Timestamp } from './timestamp.js'

// `status` may be repeated (`?status=failed&status=expired`): any of them.
// Given once, the query holds a string; repeated, an array.
const Statuses = z
  .preprocess((s) => (Array.isArray(s) ? s : [s]), z.array(DispatchStatus).max(DISPATCH_STATUSES.length))
  .transform((s) => [...new Set(s)])
  .describe('one of the statuses; repeat the parameter for several')

const Filters = {
  status: Statuses.optional(),
  subagent: FilterName.optional(),
  worker: FilterName.optional().describe('the worker of the latest claim'),
  reason: Code.optional().describe(
    'why it ended: a setup reason, the reason of an unmet or error result of its report, "fault" or "deadline"',
  ),
}

// The start of a dispatch id as the page and the CLI shorten it: 4 to 32 hex digits (dashes are
// skipped). Answered as a range of the primary key.
export const IdPrefix = z
  .string()
  .max(36)
  .regex(/^[0-9a-fA-F-]*$/, 'the start of a dispatch id: hex digits')
  .transform((p) => p.replaceAll('-', '').toLowerCase())
  .refine((hex) => hex.length >= 4 && hex.length <= 32, 'the start of a dispatch id: 4 to 32 hex digits')
  .describe('dispatches whose id starts with these hex digits (dashes are skipped)')

const ListFields = {
  ...Filters,
  ...CreatedWindow,
  idPrefix: IdPrefix.optional(),
  limit: PageLimit(50),
  cursor: PageCursor.optional(),
}
const listParams = new Set(Object.keys(ListFields))

// Besides its own parameters, `metadata.<key>=<value>` (repeatable with other keys: all must match).
export const DispatchesQuery = z
  .object(ListFields)
  .catchall(z.unknown())
  .superRefine((q, ctx) => checkMetadataParams(q, listParams, ctx))
  .refine(
    (q) => q.since === undefined || q.until === undefined || Date.parse(q.since) <= Date.parse(q.until),
    {
      path: ['until'],
      message: 'until is before since',
    },
  )
export type DispatchesQuery = z.infer<typeof DispatchesQuery>

// A long-poll waits at most this long, whatever waitMs asks (the coordinator may cap it lower).
export const MAX_WAIT_MS = 600_000

export const EndingsQuery = z.strictObject({
  ...Filters,
  since: Timestamp.optional().describe('without a cursor: endings at or after this instant; default now'),
  limit: PageLimit(50),
  cursor: PageCursor.optional(),
  waitMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_MS)
    .default(0)
    .describe('with nothing to answer yet, wait up to this long for an ending (capped, 30 s by default)'),
})
export type EndingsQuery = z.infer<typeof EndingsQuery>

// A requirement of the report that was not met: what, and why (the full result is in the dispatch).
export const FailedRequirement = z.object({
  kind: RequirementKind,
  requirement: z.string(),
  status: CheckStatus.exclude(['met']),
  reason: z.string().optional(),
})
export type FailedRequirement = z.infer<typeof FailedRequirement>

export const DispatchItem = z.object({
  id: z.uuid(),
  status: DispatchStatus,
  attempt: z.number().int().min(0),
  maxAttempts: z.number().int().min(1),
  subagent: SubagentRef,
  priority: Priority,
  metadata: Metadata.optional(),
  workerId: z.string().nullable().describe('the worker of the latest claim; null before the first'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  endedAt: Timestamp.nullable().describe('when it reached its final status; null while it may go on'),
  // Why it ended; each is there only for the status it explains.
  setup: z
    .object({
      reason: z.string(),
      exitCode: z.number().int().optional(),
      outputTail: z.string().optional().describe('the last 2,048 characters of its output'),
    })
    .optional()
    .describe('setup_failed: the step that failed, and how'),
  preflight: z
    .object({
      outcome: Outcome,
      reason: z.string().optional(),
      failed: z.array(FailedRequirement).describe('the first 20, in declaration order'),
      failedCount: z.number().int(),
    })
    .optional()
    .describe('preflight_failed: the requirements of its report that were not met'),
  fault: z
    .object({ message: z.string(), attempt: z.number().int(), at: Timestamp })
    .optional()
    .describe('expired: the last fault a worker posted'),
  exitCode: z.number().int().optional().describe('succeeded, failed: the agent’s exit code'),
})
export type DispatchItem = z.infer<typeof DispatchItem>

export const DispatchPage = z.object({ items: z.array(DispatchItem), nextCursor: z.string().nullable() })
export type DispatchPage = z.infer<typeof DispatchPage>

export const EndingsPage = z.object({
  items: z.array(DispatchItem),
  nextCursor: z.string().describe('where the next request goes on from, with or without items'),
})
export type EndingsPage = z.infer<typeof EndingsPage>
