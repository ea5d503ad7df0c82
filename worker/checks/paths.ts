// paths: each pattern must match at least one entry inside the workspace (one stat for a literal, a walk for a glob).
import { lstatSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Reason, Rejection } from '../../src/contract/reasons.js'
import { isInside, isMissing } from '../run/paths.js'
import { agentAccess, reachable } from './access.js'
import { fsPath, realPath, shown } from './names.js'
import { type GlobPlan, type LiteralPlan, planPattern } from './pattern.js'
import { isSymlink } from './resolve.js'
import type { CheckContext, Finding, Rejected } from './types.js'
import {
  childPath,
  type Frame,
  hiddenByRealPath,
  linkProblem,
  MAX_REJECTED,
  repeats,
  rootFrame,
  walkGlob,
} from './walk.js'

export async function checkPaths(pattern: string, ctx: CheckContext): Promise<Finding> {
  const plan = planPattern(pattern)
  const realRoot = workspaceRealpath(ctx)
  return plan.glob ? checkGlob(plan, realRoot, ctx) : checkLiteral(plan, realRoot, ctx)
}

function workspaceRealpath(ctx: CheckContext): string {
  let real = ctx.memo.get('realpath') as string | undefined
  if (real === undefined) {
    real = realPath(ctx.workspace)
    ctx.memo.set('realpath', real)
  }
  return real
}

// Paths are reported as shown(): a report is valid Unicode, a name that is not UTF-8 may not be.
function unmet(entriesScanned: number, rejected: Rejected[] = []): Finding {
  const listed = rejected.map(({ path, why }) => ({ path: shown(path), why }))
  return { status: 'unmet', reason: Reason.NoMatch, observed: { entriesScanned, rejected: listed } }
}

function met(match: string): Finding {
  return { status: 'met', observed: { match: shown(match) } }
}

// A literal names one path: the walk rules do not apply (`.git/HEAD` may be required), its real path decides.
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
  return met(plan.path)
}

async function checkGlob(plan: GlobPlan, realRoot: string, ctx: CheckContext): Promise<Finding> {
  const prefix = seePrefix(plan, realRoot, ctx)
  if (!('entry' in prefix)) return prefix
  const { entry, isDir } = prefix
  const rejected: Rejected[] = []
  // the prefix is an entry like any other: a pattern may match it (not `dir/**`, read as `dir/**/*`), even
  // where it cannot be entered
  if (entry.rel !== '' && plan.matches(entry.rel) && (isDir || !plan.dirOnly)) {
    if (reachesAsAgent(entry.rel, ctx)) return met(entry.rel)
    rejected.push({ path: entry.rel, why: Rejection.Unreachable })
  }
  if (!isDir || (entry.parent && repeats(entry.parent, entry.real))) return unmet(0, rejected)
  const walked = await walkGlob(plan, entry, realRoot, ctx)
  if (walked.stopped) {
    return { status: 'error', reason: walked.stopped, observed: { entriesScanned: walked.entriesScanned } }
  }
  if (walked.match !== undefined) return met(walked.match)
  return unmet(walked.entriesScanned, [...rejected, ...walked.rejected].slice(0, MAX_REJECTED))
}

interface Prefix {
  // the static prefix as the walk would see it: its path, real path, the directories on its way
  entry: Frame
  isDir: boolean
}

// The static prefix under the walk's own rules (a glob sees nothing a walk from the workspace would not):
// its directories entered one by one, the prefix itself seen; or the finding when it is not to be seen.
function seePrefix(plan: GlobPlan, realRoot: string, ctx: CheckContext): Prefix | Finding {
  let frame = rootFrame(realRoot)
  if (plan.base === '') return { entry: frame, isDir: true }
  const names = plan.base.split('/')
  // one realpath when no directory of the prefix is a symlink, the common case
  const direct = childPath(realRoot, plan.base)
  if (!names.includes('.git') && resolves(join(ctx.workspace, plan.base)) === direct) {
    // no link on the way: each directory's real path is its path under the workspace's
    for (const name of names) {
      const rel = frame.rel === '' ? name : `${frame.rel}/${name}`
      frame = { rel, real: childPath(frame.real, name), depth: 0, parent: frame, linked: false }
    }
    return { entry: frame, isDir: statSync(direct).isDirectory() }
  }
  let isDir = true
  for (const name of names) {
    // a directory on the way must be entered; the prefix itself need only be seen
    if (!isDir || repeats(frame.parent, frame.real)) return unmet(0)
    const rel = frame.rel === '' ? name : `${frame.rel}/${name}`
    // .git is never walked, even when the prefix names it; node_modules is named when in the prefix
    if (name === '.git') return unmet(0)
    const real = resolves(childPath(frame.real, name))
    if (real === undefined) {
      const dangling = isSymlink(join(ctx.workspace, rel))
      return unmet(0, dangling ? [{ path: rel, why: Rejection.DanglingSymlink }] : [])
    }
    if (!isInside(real, realRoot)) return unmet(0, [{ path: rel, why: Rejection.SymlinkEscapesWorkspace }])
    if (hiddenByRealPath(real, realRoot, plan)) return unmet(0)
    isDir = statSync(fsPath(real)).isDirectory()
    frame = {
      rel,
      real,
      depth: 0,
      parent: frame,
      linked: frame.linked || real !== childPath(frame.real, name),
    }
  }
  return { entry: frame, isDir }
}

// The real path of an entry, or undefined when it is not there (a dangling link, a loop, a file on the way).
function resolves(path: string): string | undefined {
  try {
    return realPath(path)
  } catch (err) {
    if (isMissing(err)) return undefined
    throw err
  }
}

function reachesAsAgent(rel: string, ctx: CheckContext): boolean {
  const agent = agentAccess(ctx)
  return !agent || reachable(join(ctx.workspace, rel), agent.who, agent.cache)
}
