// HTTP wire shapes of the coordinator (docs/http-api.md: requests, errors, limits): requests are strict, responses exact.
import { z } from 'zod'
import { MAX_DETAIL_CHARS } from './bounds.js'
import { SUBAGENT_NAME, SubagentDefinition } from './definition.js'
import { ERROR_CODES } from './errors.js'
import { FreeJsonObject } from './json.js'
import { Observed, UndeclaredList } from './observed.js'
import { REPO_SECRET_MESSAGE, repoHasSecret } from './repo-url.js'
import { CheckResult, Code, Outcome, PreflightReport } from './report.js'
import { ROLES } from './roles.js'
import { Metadata, Priority } from './steering.js'
import { Timestamp } from './timestamp.js'

export { ROLES }

const noNul = (s: string) => !s.includes('\0')
const text = (max: number) => z.string().min(1).max(max).refine(noNul, 'must not contain NUL')
// Values handed to git on the worker: a leading "-" would read as an option.
const gitArg = (max: number) => text(max).regex(/^[^-]/, 'must not start with "-"')

// What a stored preflight report answers: the agent may start, or the dispatch ends here.
export const DECISIONS = ['proceed', 'abort'] as const
export const Decision = z.enum(DECISIONS)
export type Decision = z.infer<typeof Decision>

export const Role = z.enum(ROLES)
export type Role = z.infer<typeof Role>

export const DISPATCH_STATUSES = [
  'queued',
  'claimed',
  'setup_failed',
  'preflight_failed',
  'running',
  'succeeded',
  'failed',
  'expired',
  'cancelled',
] as const
export const DispatchStatus = z.enum(DISPATCH_STATUSES)
export type DispatchStatus = z.infer<typeof DispatchStatus>

export const SubagentName = z
  .string()
  .regex(SUBAGENT_NAME, 'a subagent name is 1-128 of letters, digits, "._-"')
export const Label = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/=-]{0,127}$/, 'a label is 1-128 of letters, digits, "._:/=-"')
export const Labels = z.array(Label).max(32)

export const ErrorEnvelope = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.unknown().optional() }),
})
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>
// An error body as a client reads it, before trusting any field of it.
export type ErrorBody = { error?: Partial<ErrorEnvelope['error']> }

// --- subagents -------------------------------------------------------------------------------
export const SubagentRef = z.object({ name: SubagentName, version: z.number().int().min(1) })
export const SubagentRegistered = z.object({
  name: SubagentName,
  version: z.number().int().min(1),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
})
export type SubagentRegistered = z.infer<typeof SubagentRegistered>
export const SubagentVersionView = SubagentRegistered.extend({
  definition: SubagentDefinition,
  createdAt: Timestamp,
})
export type SubagentVersionView = z.infer<typeof SubagentVersionView>
// GET /v1/subagents/{name}[?version=N]: the latest version unless one is asked for.
export const SubagentPath = z.object({ name: SubagentName })
export const SubagentVersionQuery = z.strictObject({
  version: z
    .string()
    .regex(/^[1-9][0-9]{0,8}$/, 'version is a whole number from 1')
    .transform(Number)
    .optional(),
})

// --- dispatches ------------------------------------------------------------------------------
// The {id} of /v1/dispatches/{id}/…
export const DispatchId = z.object({ id: z.uuid() })
export type DispatchId = z.infer<typeof DispatchId>

// `repo` is cloned at `ref`; `path` (absolute, on the worker, under its --workspace-root) wins when given.
export const Workspace = z
  .strictObject({
    // the message never quotes the value: it holds a secret
    repo: gitArg(2048)
      .refine((repo) => !repoHasSecret(repo), REPO_SECRET_MESSAGE)
      .optional(),
    ref: gitArg(256).optional(),
    setup: z.array(z.string().max(4096).refine(noNul, 'must not contain NUL')).min(1).max(256).optional(),
    path: text(4096).regex(/^\//, 'workspace.path must be absolute').optional(),
  })
  .refine((w) => w.repo !== undefined || w.path !== undefined, 'workspace needs repo or path')
export type Workspace = z.infer<typeof Workspace>

// A dispatch's deadline is at most this far ahead (timeoutMs at most this long).
export const MAX_DISPATCH_TIMEOUT_MS = 7 * 24 * 3_600_000

export const CreateDispatchRequest = z
  .strictObject({
    subagent: SubagentName,
    workspace: Workspace,
    idempotencyKey: text(256).optional(),
    labels: Labels.optional(),
    priority: Priority.optional(),
    metadata: Metadata.optional(),
    deadline: Timestamp.optional().describe(
      'the dispatch ends by then: never claimed after it (expired), its agent stopped at it (failed); reason "deadline"',
    ),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_DISPATCH_TIMEOUT_MS)
      .optional()
      .describe('the deadline as a time from now (not with deadline)'),
  })
  .superRefine((req, ctx) => {
    if (req.deadline === undefined) return
    if (req.timeoutMs !== undefined)
      ctx.addIssue({ code: 'custom', path: ['timeoutMs'], message: 'give deadline or timeoutMs, not both' })
    const left = Date.parse(req.deadline) - Date.now()
    if (left <= 0) ctx.addIssue({ code: 'custom', path: ['deadline'], message: 'deadline is in the past' })
    if (left > MAX_DISPATCH_TIMEOUT_MS)
      ctx.addIssue({ code: 'custom', path: ['deadline'], message: 'deadline is more than 7 days ahead' })
  })
export type CreateDispatchRequest = z.infer<typeof CreateDispatchRequest>

export const DispatchCreated = z.object({ id: z.uuid(), status: DispatchStatus })
export type DispatchCreated = z.infer<typeof DispatchCreated>

// POST /v1/dispatches/{id}/cancel: why, for people (optional; the body may be left out).
export const CancelRequest = z.strictObject({ reason: text(1024).optional() })
export type CancelRequest = z.infer<typeof CancelRequest>

// POST /v1/dispatches/{id}/retry: a new dispatch of the same definition version on the same workspace
// (the body may be left out). The same key answers the dispatch it created, as for POST /v1/dispatches.
// The answer is DispatchCreated: the new dispatch's { id, status }.
export const RetryRequest = z.strictObject({ idempotencyKey: text(256).optional() })
export type RetryRequest = z.infer<typeof RetryRequest>

// Who cancelled a dispatch (the token's id and role), why and when.
export const Cancellation = z.object({
  by: z.object({ tokenId: z.number().int().nullable(), role: Role }),
  reason: z.string().optional(),
  at: Timestamp,
})
export type Cancellation = z.infer<typeof Cancellation>

export const DispatchEvent = z.object({
  step: z.string(),
  at: Timestamp,
  attempt: z.number().int().min(0),
  detail: z.unknown().optional(),
})
export type DispatchEvent = z.infer<typeof DispatchEvent>

export const PreflightView = z.object({
  attempt: z.number().int().min(1),
  outcome: Outcome,
  decision: Decision,
  declared: z.boolean(),
  reason: z.string().optional(),
  results: z.array(CheckResult),
  startedAt: Timestamp,
  finishedAt: Timestamp,
  worker: z.unknown().optional(),
  createdAt: Timestamp,
})
export type PreflightView = z.infer<typeof PreflightView>

// HEAD (null before the first commit) and a tree id of the working state, untracked files included.
export const Baseline = z.strictObject({
  head: z.string().max(128).nullable(),
  tree: z.string().min(1).max(128),
})
export type Baseline = z.infer<typeof Baseline>

export const Completion = z.object({
  status: DispatchStatus,
  exitCode: z.number().int().optional(),
  baseline: Baseline.optional(),
  durationMs: z.number().nonnegative().optional(),
  reason: z.string().optional(),
  detail: z.string().optional(),
  outputDropped: z.number().int().min(0).optional(),
  observed: Observed.optional(),
  undeclared: UndeclaredList.optional(),
  at: Timestamp,
})
export type Completion = z.infer<typeof Completion>

export const DispatchView = z.object({
  id: z.uuid(),
  status: DispatchStatus,
  attempt: z.number().int().min(0),
  maxAttempts: z.number().int().min(1),
  subagent: SubagentRef,
  workspace: Workspace,
  labels: Labels.optional(),
  idempotencyKey: z.string().optional(),
  priority: Priority,
  metadata: Metadata.optional(),
  // The newest events (at most 200), oldest first; eventCount counts them all.
  events: z.array(DispatchEvent),
  eventCount: z.number().int().min(0),
  preflight: PreflightView.optional(),
  completion: Completion.optional(),
  deadline: Timestamp.optional(),
  cancel: Cancellation.optional(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type DispatchView = z.infer<typeof DispatchView>

// --- worker ----------------------------------------------------------------------------------
export const ClaimRequest = z.strictObject({
  workerId: text(256),
  labels: Labels.optional(),
  // Clamped to the coordinator's cap (default 30 s); 0 answers at once.
  waitMs: z.number().int().min(0).max(600_000).optional(),
})
export type ClaimRequest = z.infer<typeof ClaimRequest>

export const Lease = z.object({ token: z.string(), expiresAt: Timestamp })
export type Lease = z.infer<typeof Lease>

export const ClaimResponse = z.object({
  dispatch: z.object({
    id: z.uuid(),
    attempt: z.number().int().min(1),
    workspace: Workspace,
    subagent: SubagentRef,
    labels: Labels.optional(),
    priority: Priority.optional(),
    metadata: Metadata.optional(),
    deadline: Timestamp.optional().describe('stop the agent at this instant (failed, reason "deadline")'),
  }),
  subagent: SubagentDefinition,
  lease: Lease,
})
export type ClaimResponse = z.infer<typeof ClaimResponse>

// The part of a claim answer without which nothing can be written back: the dispatch's fence and its lease.
export const ClaimFence = z.object({
  dispatch: ClaimResponse.shape.dispatch.pick({ id: true, attempt: true }),
  lease: ClaimResponse.shape.lease,
})
export type ClaimFence = z.infer<typeof ClaimFence>

// Every worker write carries the fence of its lease. `attempt` is an integer column: a larger value
// could never match, and would reach the database only to fail there.
export const Fence = z.strictObject({
  attempt: z.number().int().min(1).max(2_147_483_647, 'attempt is at most 2147483647'),
  leaseToken: z.string().min(1).max(256),
})
export type Fence = z.infer<typeof Fence>
const fence = Fence.shape

export const HeartbeatRequest = z.strictObject(fence)
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>
export const HeartbeatResponse = z.object({ status: DispatchStatus, lease: Lease })
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>

export const PreflightRequest = z.strictObject({ ...fence, report: PreflightReport })
export type PreflightRequest = z.infer<typeof PreflightRequest>
export const PreflightDecision = z.object({
  decision: Decision,
  status: DispatchStatus,
})
export type PreflightDecision = z.infer<typeof PreflightDecision>

// The steps the coordinator writes into the event log itself (src/coordinator/db/*.ts): a worker posting one
// would pass off its own line as the coordinator's.
export const COORDINATOR_STEPS = [
  'created',
  'claimed',
  'preflight',
  'lease-expired',
  'expired',
  'cancelled',
  'completed',
] as const
const coordinatorStep = new Set<string>(COORDINATOR_STEPS)

export const EventRequest = z.strictObject({
  ...fence,
  step: Code.refine((step) => !coordinatorStep.has(step), {
    error: (issue) => `step ${JSON.stringify(issue.input)} is written by the coordinator`,
  }),
  detail: FreeJsonObject.optional(),
})
export type EventRequest = z.infer<typeof EventRequest>
export const EventRecorded = z.object({ step: z.string(), at: Timestamp, attempt: z.number().int() })
export type EventRecorded = z.infer<typeof EventRecorded>

// The agent ran: `exitCode` (0 → succeeded, else failed), with `reason: "deadline"` when the worker
// stopped it at the dispatch's deadline, and `detail`: the tail of its output (optional: older workers
// send none). Setup failed before verification: `status: "setup_failed"`
// with a `reason` code, the `detail` (tail of the setup output) and, when setup ran, its `exitCode`.
// The dispatch was cancelled: `status: "cancelled"` with what the worker had (the agent's exit code,
// the baseline, `detail`: the tail of its output) — a completion of any kind that reaches a cancelled
// dispatch is kept that way.
// Any of the three may say how many lines of the dispatch's output (setup's and the agent's) the
// worker's log dropped for a reader that could not keep up: `outputDropped`, absent when none.
export const CompleteRequest = z
  .strictObject({
    ...fence,
    exitCode: z.number().int().optional(),
    baseline: Baseline.optional(),
    durationMs: z.number().nonnegative().optional(),
    status: z.enum(['setup_failed', 'cancelled']).optional(),
    reason: Code.optional(),
    detail: z.string().max(MAX_DETAIL_CHARS).optional(),
    outputDropped: z.number().int().min(0).optional(),
    // a worker that observes: what setup and the agent used, and what of it no requirement declares
    observed: Observed.optional(),
    undeclared: UndeclaredList.optional(),
    // a worker whose slot is free again asks for its next dispatch in the same request: the answer's
    // `next` is a claim (as `POST /v1/worker/claim` answers it, never waiting), absent when none was free
    next: ClaimRequest.omit({ waitMs: true }).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.status === 'setup_failed') {
      if (body.reason === undefined)
        ctx.addIssue({ code: 'custom', path: ['reason'], message: 'setup_failed needs a reason code' })
      if (body.baseline !== undefined)
        ctx.addIssue({ code: 'custom', path: ['baseline'], message: 'setup_failed has no baseline' })
    } else if (body.status === 'cancelled') {
      if (body.reason !== undefined)
        ctx.addIssue({ code: 'custom', path: ['reason'], message: 'cancelled carries no reason code' })
    } else {
      if (body.exitCode === undefined)
        ctx.addIssue({ code: 'custom', path: ['exitCode'], message: 'exitCode is required' })
      if (body.reason !== undefined && body.reason !== 'deadline')
        ctx.addIssue({
          code: 'custom',
          path: ['reason'],
          message: 'an agent exit carries no reason but "deadline"',
        })
    }
  })
export type CompleteRequest = z.infer<typeof CompleteRequest>
// The two bodies of complete, less the fence: the agent ran, or setup failed before verification.
type Observation = 'observed' | 'undeclared'
export type AgentExit = Pick<
  CompleteRequest,
  'baseline' | 'durationMs' | 'detail' | 'outputDropped' | Observation
> & {
  exitCode: number
  reason?: 'deadline'
}
// What a worker had when the dispatch was cancelled.
export type CancelledExit = Pick<
  CompleteRequest,
  'baseline' | 'durationMs' | 'exitCode' | 'detail' | 'outputDropped' | Observation
>
export type SetupFailure = Required<Pick<CompleteRequest, 'reason'>> &
  Pick<CompleteRequest, 'detail' | 'exitCode' | 'outputDropped' | Observation>
export const CompleteResponse = z.object({
  id: z.uuid(),
  status: DispatchStatus,
  // the next dispatch claimed for the worker, when it asked (`next`) and one was free
  next: ClaimResponse.optional(),
})
export type CompleteResponse = z.infer<typeof CompleteResponse>

// --- tokens ----------------------------------------------------------------------------------
export const TOKEN_STATES = ['active', 'expired', 'revoked'] as const

// A token as an admin sees it: never the secret, nor its hash.
export const TokenView = z.object({
  id: z.number().int().min(1),
  role: Role,
  label: z.string().nullable(),
  bootstrap: z.boolean().describe('seeded from PREFLIGHT_BOOTSTRAP_TOKENS'),
  state: z.enum(TOKEN_STATES),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable().describe('to the minute'),
  expiresAt: Timestamp.nullable(),
  revokedAt: Timestamp.nullable(),
})
export type TokenView = z.infer<typeof TokenView>

export const TokenId = z.object({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, 'a token id is a whole number from 1')
    .transform(Number),
})

export const TokensQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(2048).optional().describe('nextCursor of the previous page, as received'),
})
export type TokensQuery = z.infer<typeof TokensQuery>

// POST /v1/tokens: a new token of one role; the answer carries the secret, once.
export const TokenCreate = z.strictObject({
  role: Role,
  label: z.string().min(1).max(200).optional().describe('a note shown by the token list'),
  expiresAt: Timestamp.optional().describe('when it stops working (in the future); none: never'),
})
export type TokenCreate = z.infer<typeof TokenCreate>
export const TokenCreated = TokenView.extend({
  token: z.string().describe('the secret: shown this once, stored only as a hash'),
})
export type TokenCreated = z.infer<typeof TokenCreated>

export const TokenPage = z.object({ items: z.array(TokenView), nextCursor: z.string().nullable() })
export type TokenPage = z.infer<typeof TokenPage>

// --- health ----------------------------------------------------------------------------------
export const Health = z.object({ status: z.enum(['ok', 'unavailable']), database: z.string().optional() })
