// The evaluator: every declared requirement checked concurrently, each bounded, fail-closed (docs/requirements.md).
import type {
  CheckResult,
  ContextRequires,
  PreflightReport,
  RequirementKind,
} from '../../src/contract/index.js'
import { execNameProblems, outcomeOf, pathPatternProblems } from '../../src/contract/light.js'
import { Reason } from '../../src/contract/reasons.js'
import type { GitRunner } from '../run/job-git.js'
import { type Declared, declaredRequirements } from './declared.js'
import { checkExec } from './exec.js'
import { checkGit } from './git.js'
import { DirectoryCache } from './listing.js'
import { checkPaths } from './paths.js'
import type { AgentIdentity, CheckContext, Checker, Finding } from './types.js'

export type { AgentIdentity, CheckContext, Checker, Finding } from './types.js'

const DEFAULT_TIMEOUT_MS = 10_000
const DEFAULT_MAX_ENTRIES = 200_000

export const checkers = { paths: checkPaths, exec: checkExec, git: checkGit } satisfies Record<
  RequirementKind,
  Checker
>

export interface VerifyOptions {
  // absolute path of the workspace
  workspace: string
  // the agent environment
  env: Record<string, string>
  // the uid/gid the agent runs as: exec and paths then judge what it may do, not this process
  agent?: AgentIdentity
  // per check
  timeoutMs?: number
  // walk bound per paths pattern
  maxEntries?: number
  // the job's git: the worker's trusted git (found once at its start), run as the agent
  git?: GitRunner
}

// The report less the worker's own details, which lifecycle.ts adds.
export type Verdict = Omit<PreflightReport, 'worker'>

// Everything a checker sees except its own abort signal.
export type EvaluationContext = Omit<CheckContext, 'signal'>

export function evaluationContext(
  requires: ContextRequires | undefined,
  opts: VerifyOptions,
): EvaluationContext {
  return {
    workspace: opts.workspace,
    env: opts.env,
    ...(opts.agent ? { agent: opts.agent } : {}),
    requires: requires ?? {},
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxEntries: opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
    listings: new DirectoryCache(),
    memo: new Map(),
    ...(opts.git ? { git: opts.git } : {}),
  }
}

export async function verify(requires: ContextRequires | undefined, opts: VerifyOptions): Promise<Verdict> {
  const startedAt = new Date().toISOString()
  const requirements = declaredRequirements(requires)
  const results = await evaluate(requirements, checkers, evaluationContext(requires, opts))
  return {
    outcome: outcomeOf(results),
    declared: requirements.length > 0,
    results,
    startedAt,
    finishedAt: new Date().toISOString(),
  }
}

// One result per requirement, in declaration order, each `error: not-checked` until a checker decides it:
// a requirement whose evaluation failed outright (a bug past runBounded) keeps that result.
export async function evaluate(
  requirements: readonly Declared[],
  table: Partial<Record<string, Checker>>,
  ctx: EvaluationContext,
): Promise<CheckResult[]> {
  const results: CheckResult[] = requirements.map(({ kind, requirement }) => ({
    kind,
    requirement,
    status: 'error',
    reason: Reason.NotChecked,
    observed: {},
    durationMs: 0,
  }))
  const started = performance.now()
  await Promise.allSettled(
    startOrder(requirements).map(async (i) => {
      const req = requirements[i] as Declared
      const finding = await runBounded(req, table, ctx)
      results[i] = toResult(req, finding, performance.now() - started)
    }),
  )
  return results
}

// git checks start first: their child process then runs while the file system checks do their
// synchronous work on this thread. Results stay in declaration order whatever the start order.
function startOrder(requirements: readonly Declared[]): number[] {
  const ranked = requirements.map((req, i) => ({ i, rank: req.kind === 'git' ? 0 : 1 }))
  // sort() is stable: within a rank, declaration order stays
  return ranked.sort((a, b) => a.rank - b.rank).map(({ i }) => i)
}

function toResult(req: Declared, finding: Finding, ms: number): CheckResult {
  const result: CheckResult = {
    kind: req.kind,
    requirement: req.requirement,
    status: finding.status,
    observed: finding.observed,
    durationMs: Math.round(ms * 1000) / 1000,
  }
  if (finding.status !== 'met') result.reason = finding.reason ?? Reason.CheckFailed
  return result
}

// The coordinator validates definitions; the worker checks again, because a name such as `../../bin/sh`
// joined to a PATH entry would resolve, and a coordinator of another version may not have refused it.
const SHAPES = new Map<string, (requirement: string) => string[]>([
  ['paths', pathPatternProblems],
  ['exec', execNameProblems],
])

function invalidity(req: Declared): string | undefined {
  if (req.problem !== undefined) return req.problem
  // '' (no problem) when the requirement is well-formed
  return SHAPES.get(req.kind)?.(req.requirement).join('; ')
}

// A checker's answer, or `error` when it has none, throws, or runs past the timeout (then it is told to stop).
async function runBounded(
  req: Declared,
  table: Partial<Record<string, Checker>>,
  ctx: EvaluationContext,
): Promise<Finding> {
  const checker = Object.hasOwn(table, req.kind) ? table[req.kind] : undefined
  if (!checker) return failure(Reason.UnknownKind, { kind: req.kind })
  const problem = invalidity(req)
  if (problem) return failure(Reason.InvalidRequirement, { problem })
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<Finding>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`timed out after ${ctx.timeoutMs} ms`))
      resolve(failure(Reason.Timeout, { timeoutMs: ctx.timeoutMs }))
    }, ctx.timeoutMs)
  })
  const checked = Promise.resolve()
    .then(() => checker(req.requirement, { ...ctx, signal: controller.signal }))
    .then(
      (finding) => (isFinding(finding) ? finding : failure(Reason.CheckFailed, { message: 'no verdict' })),
      (err: unknown) => failure(Reason.CheckFailed, { message: messageOf(err) }),
    )
  try {
    return await Promise.race([checked, timedOut])
  } finally {
    clearTimeout(timer)
  }
}

const STATUSES: readonly unknown[] = ['met', 'unmet', 'error']

// Only a well-formed answer fills a result: anything else from a checker is a bug, reported as such.
function isFinding(value: unknown): value is Finding {
  if (typeof value !== 'object' || value === null) return false
  const { status, observed } = value as Partial<Finding>
  return STATUSES.includes(status) && typeof observed === 'object' && observed !== null
}

function failure(reason: Reason, observed: Record<string, unknown>): Finding {
  return { status: 'error', reason, observed }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
