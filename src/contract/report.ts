// Check results and preflight reports (docs/requirements.md, results; docs/http-api.md, the report body).
import { z } from 'zod'
import { FreeJsonObject } from './json.js'
import { MAX_PATTERN_LENGTH, RequirementKind } from './requirements.js'
import { Timestamp } from './timestamp.js'

// A stable code: lowercase words joined by "-" (steps, reasons).
export const Code = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,63}$/, 'a code is 1-64 lowercase letters, digits and "-", starting with a letter')

export const CHECK_STATUSES = ['met', 'unmet', 'error'] as const
export const CheckStatus = z.enum(CHECK_STATUSES)
export type CheckStatus = z.infer<typeof CheckStatus>

export const CheckResult = z.strictObject({
  kind: RequirementKind,
  // Bounded like what can be declared (and so stays within the database's index entries).
  requirement: z
    .string()
    .max(MAX_PATTERN_LENGTH, `a requirement is at most ${MAX_PATTERN_LENGTH} characters`),
  status: CheckStatus,
  reason: Code.optional(),
  observed: FreeJsonObject,
  durationMs: z.number().nonnegative(),
})
export type CheckResult = z.infer<typeof CheckResult>

// met only when every result is met; otherwise unmet when any result is unmet, else error.
export const Outcome = CheckStatus
export type Outcome = CheckStatus

export const WorkerInfo = z.strictObject({
  id: z.string().min(1).max(256),
  image: z.string().max(512).optional(),
  node: z.string().max(64).optional(),
  hostname: z.string().max(256).optional(),
})

export const PreflightReport = z.strictObject({
  outcome: Outcome,
  declared: z.boolean(),
  results: z.array(CheckResult).max(1024),
  startedAt: Timestamp,
  finishedAt: Timestamp,
  worker: WorkerInfo.optional(),
})
export type PreflightReport = z.infer<typeof PreflightReport>

export { outcomeOf } from './light.js'

// What `preflight check --format json` prints: the report less the worker, with the workspace it judged.
export const CheckReport = z.strictObject({
  outcome: Outcome,
  declared: z.boolean(),
  workspace: z.string().min(1),
  results: PreflightReport.shape.results,
  startedAt: Timestamp,
  finishedAt: Timestamp,
})
export type CheckReport = z.infer<typeof CheckReport>
