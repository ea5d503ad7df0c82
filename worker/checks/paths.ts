// paths: each pattern must match at least one entry inside the workspace (one stat for a literal, a walk for a glob).
import { lstatSync, realpathSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Reason, Rejection } from '../../src/contract/index.js'
import { agentAccess, reachable } from './access.js'
import { type GlobPlan, type LiteralPlan, planPattern } from './pattern.js'
import { isMissing, isSymlink } from './resolve.js'
import type { CheckContext, Finding, Rejected } from './types.js'
import { isInside, linkProblem, walkGlob } from './walk.js'

export async function checkPaths(pattern: string, ctx: CheckContext): Promise<Finding> {
  const plan = planPattern(pattern)
  const realRoot = workspaceRealpath(ctx)
  return plan.glob ? checkGlob(plan, realRoot, ctx) : checkLiteral(plan, realRoot, ctx)
}

function workspaceRealpath(ctx: CheckContext): string {
  let real = ctx.memo.get('realpath') as string | undefined
  if (real === undefined) {
    real = realpathSync.native(ctx.workspace)
    ctx.memo.set('realpath', real)
  }
  return real
}

function unmet(entriesScanned: number, rejected: Rejected[] = []): Finding {
  return { status: 'unmet', reason: Reason.NoMatch, observed: { entriesScanned, rejected } }
}

function checkLiteral(plan: LiteralPlan, realRoot: string, ctx: CheckContext): Finding {
  const abs = join(ctx.workspace, plan.path)
  try {
    if (!lstatSync(abs, { throwIfNoEntry: false })) return unmet(0)
  } catch (err) {
    if (isMissing(err)) return unmet(0)
    throw err
  }
  // the real path decides: the entry itself or any directory on the way may be a symlink
  const why = linkProblem(abs, realRoot, plan.dirOnly)
  if (why === null) return unmet(0)
  if (why) return unmet(0, [{ path: plan.path, why }])
  const agent = agentAccess(ctx)
  if (agent && !reachable(abs, agent.who, agent.cache)) {
    return unmet(0, [{ path: plan.path, why: Rejection.Unreachable }])
  }
  return { status: 'met', observed: { match: plan.path } }
}

async function checkGlob(plan: GlobPlan, realRoot: string, ctx: CheckContext): Promise<Finding> {
  // .git/ is git's own state, never walked, even when a pattern's prefix names it
  if (plan.base.split('/').includes('.git')) return unmet(0)
  const baseProblem = plan.base === '' ? undefined : checkBase(plan.base, realRoot, ctx)
  if (baseProblem) return baseProblem
  const walked = await walkGlob(plan, realRoot, ctx)
  if (walked.stopped) {
    return { status: 'error', reason: walked.stopped, observed: { entriesScanned: walked.entriesScanned } }
  }
  if (walked.match !== undefined) return { status: 'met', observed: { match: walked.match } }
  return unmet(walked.entriesScanned, walked.rejected)
}

// The static prefix must be a directory whose real path is inside the workspace; below it the walk follows no links.
function checkBase(base: string, realRoot: string, ctx: CheckContext): Finding | undefined {
  let real: string
  try {
    real = realpathSync.native(join(ctx.workspace, base))
  } catch (err) {
    if (!isMissing(err)) throw err
    return unmet(
      0,
      isSymlink(join(ctx.workspace, base)) ? [{ path: base, why: Rejection.DanglingSymlink }] : [],
    )
  }
  if (!isInside(real, realRoot)) return unmet(0, [{ path: base, why: Rejection.SymlinkEscapesWorkspace }])
  if (!statSync(real).isDirectory()) return unmet(0)
  return undefined
}
