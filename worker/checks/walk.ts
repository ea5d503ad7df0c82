// The bounded, stop-at-first-match walk of one glob below its static prefix.
import { realpathSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Reason, Rejection } from '../../src/contract/index.js'
import { type AgentAccess, agentAccess, reachable } from './access.js'
import type { GlobPlan } from './pattern.js'
import { isMissing } from './resolve.js'
import type { CheckContext, Rejected } from './types.js'

const MAX_REJECTED = 20
// hand the event loop back this often, so timers (the timeout) and child processes (git) get their turn
const SLICE_MS = 4

export interface WalkResult {
  match?: string
  entriesScanned: number
  rejected: Rejected[]
  stopped?: typeof Reason.WalkLimit | typeof Reason.Timeout
}

interface Frame {
  rel: string
  depth: number
}

export async function walkGlob(plan: GlobPlan, realRoot: string, ctx: CheckContext): Promise<WalkResult> {
  const result: WalkResult = { entriesScanned: 0, rejected: [] }
  const agent = agentAccess(ctx)
  const stack: Frame[] = [{ rel: plan.base, depth: 0 }]
  let sliceStart = performance.now()
  await yieldToLoop()
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (ctx.signal.aborted) return { ...result, stopped: Reason.Timeout }
    const entries =
      ctx.listings.list(frame.rel === '' ? ctx.workspace : `${ctx.workspace}/${frame.rel}`) ?? []
    result.entriesScanned += entries.length
    if (result.entriesScanned > ctx.maxEntries) return { ...result, stopped: Reason.WalkLimit }
    const subdirs: Frame[] = []
    for (const entry of entries) {
      const name = entry.name
      if (name === '.git' || (name === 'node_modules' && !plan.entersNodeModules)) continue
      const rel = frame.rel === '' ? name : `${frame.rel}/${name}`
      if (
        plan.matches(rel) &&
        accept(rel, entry.isSymbolicLink(), entry.isDirectory(), plan, realRoot, ctx, result) &&
        (!agent || reaches(agent, rel, ctx, result))
      ) {
        return { ...result, match: rel }
      }
      if (entry.isDirectory() && plan.mayEnter(name, frame.depth + 1))
        subdirs.push({ rel, depth: frame.depth + 1 })
    }
    // files of a directory are tried before any subdirectory; subdirectories in listing order
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as Frame)
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldToLoop()
      sliceStart = performance.now()
    }
  }
  return result
}

// A matching entry counts unless it is a symlink that dangles or leaves the workspace. Walks never enter
// symlinked directories, so an entry reached without one has its real path inside the (contained) base.
function accept(
  rel: string,
  isLink: boolean,
  isDir: boolean,
  plan: GlobPlan,
  realRoot: string,
  ctx: CheckContext,
  result: WalkResult,
): boolean {
  if (!isLink) return isDir || !plan.dirOnly
  const why = linkProblem(join(ctx.workspace, rel), realRoot, plan.dirOnly)
  if (why === undefined) return true
  if (why !== null && result.rejected.length < MAX_REJECTED) result.rejected.push({ path: rel, why })
  return false
}

// Whether the agent can reach a match; one it cannot is listed, and the walk goes on.
function reaches(agent: AgentAccess, rel: string, ctx: CheckContext, result: WalkResult): boolean {
  if (reachable(join(ctx.workspace, rel), agent.who, agent.cache)) return true
  if (result.rejected.length < MAX_REJECTED) result.rejected.push({ path: rel, why: Rejection.Unreachable })
  return false
}

// Why a symlink does not count; null when it points at something of the wrong type (not a rejection).
export function linkProblem(abs: string, realRoot: string, dirOnly: boolean): Rejection | null | undefined {
  let target: string
  try {
    target = realpathSync.native(abs)
  } catch (err) {
    if (isMissing(err)) return Rejection.DanglingSymlink
    throw err
  }
  if (!isInside(target, realRoot)) return Rejection.SymlinkEscapesWorkspace
  if (dirOnly && !statSync(target).isDirectory()) return null
  return undefined
}

export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root === '/' ? '/' : `${root}/`)
}

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
