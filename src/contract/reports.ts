// Wire shapes of the operators' queries: GET /v1/reports and GET /v1/reports/summary (docs/reports.md).
import { z } from 'zod'
import {
  PageCursor as Cursor,
  PageLimit as Limit,
  FilterName as Name,
  CreatedWindow as Window,
} from './paging.js'
import { CheckResult, Code, Outcome } from './report.js'
import { RequirementKind } from './requirements.js'

export const ReportsQuery = z.strictObject({
  outcome: Outcome.optional(),
  subagent: Name.optional(),
  worker: Name.optional().describe('the id the worker reported with'),
  kind: RequirementKind.optional().describe('reports with at least one result of this kind'),
  reason: Code.optional().describe(
    'reports with at least one result with this reason (on the same result as kind, when both)',
  ),
  ...Window,
  limit: Limit(50),
  cursor: Cursor.optional(),
})
export type ReportsQuery = z.infer<typeof ReportsQuery>

export const ReportItem = z.object({
  dispatchId: z.string(),
  subagent: z.string(),
  subagentVersion: z.number().int(),
  workerId: z.string(),
  attempt: z.number().int(),
  outcome: Outcome,
  results: z.array(CheckResult),
  createdAt: z.string(),
})
export type ReportItem = z.infer<typeof ReportItem>

export const ReportPage = z.object({ items: z.array(ReportItem), nextCursor: z.string().nullable() })
export type ReportPage = z.infer<typeof ReportPage>

export const SummaryQuery = z.strictObject({
  subagent: Name.optional(),
  ...Window,
  limit: Limit(100),
  cursor: Cursor.optional(),
})
export type SummaryQuery = z.infer<typeof SummaryQuery>

export const SummaryItem = z.object({
  subagent: z.string(),
  kind: z.string(),
  requirement: z.string(),
  checks: z.number().int(),
  met: z.number().int(),
  unmet: z.number().int(),
  error: z.number().int(),
  lastMetAt: z.string().nullable(),
  firstUnmetAfterMetAt: z
    .string()
    .nullable()
    .describe('drift: the earliest unmet/error result after the latest met one; null while met or never met'),
})
export type SummaryItem = z.infer<typeof SummaryItem>

// What observed dispatches of a subagent used that its definition does not declare (docs/attribution.md):
// per need, how many ended dispatches found it missing and how many found it present, and the last one.
export const UndeclaredCount = z.object({
  subagent: z.string(),
  kind: z.enum(['exec', 'paths']),
  need: z.string().describe('the program name (exec) or the workspace-relative file (paths)'),
  missing: z.number().int(),
  present: z.number().int(),
  lastAt: z.string(),
})
export type UndeclaredCount = z.infer<typeof UndeclaredCount>
export const MAX_UNDECLARED_COUNTS = 500

export const SummaryPage = z.object({
  items: z.array(SummaryItem),
  nextCursor: z.string().nullable(),
  undeclared: z
    .array(UndeclaredCount)
    .max(MAX_UNDECLARED_COUNTS)
    .optional()
    .describe(
      'for the subagents of this page (or the one asked for), in the window: the needs their observed dispatches used and no requirement declares',
    ),
})
export type SummaryPage = z.infer<typeof SummaryPage>
