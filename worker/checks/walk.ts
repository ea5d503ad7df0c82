// The bounded, stop-at-first-match walk of one glob below its static prefix, by the walk rules of
// docs/requirements.md: symlinked directories are followed, judged by real path, loops cut.
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { Reason, Rejection } from '../../src/contract/reasons.js'
import { isInside, isMissing } from '../run/paths.js'
import { type AgentAccess, agentAccess, reachable } from './access.js'
import type { Entry } from './listing.js'
import { fsPath, realPath } from './names.js'
import type { GlobPlan } from './pattern.js'
import { Turns } from './turns.js'
import type { CheckContext, Rejected } from './types.js'

export const MAX_REJECTED = 20

export interface WalkResult {
  match?: string
  entriesScanned: number
  rejected: Rejected[]
  stopped?: typeof Reason.WalkLimit | typeof Reason.Timeout
}

// A directory the walk entered: its path as the walk spells it, its real path, the directory it was entered from.
export interface Frame {
  rel: string
  real: string
  // below the static prefix (1 = a child of it)
  depth: number
  parent?: Frame
  // a symlink was followed on the way here: only then can a real path repeat on the frame's path
  linked: boolean
}

// What an entry of a listing is, once its symlinks are followed.
type Seen = { real: string; isDir: boolean } | { why: Rejection } | 'hidden'

export function rootFrame(realRoot: string): Frame {
  return { rel: '', real: realRoot, depth: 0, linked: false }
}

export async function walkGlob(
  plan: GlobPlan,
  start: Frame,
  realRoot: string,
  ctx: CheckContext,
  // its turns on the event loop (a test passes shorter slices)
  turns = new Turns(ctx.signal),
): Promise<WalkResult> {
  const result: WalkResult = { entriesScanned: 0, rejected: [] }
  const agent = agentAccess(ctx)
  const stack: Frame[] = [start]
  await turns.give()
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (ctx.signal.aborted) return { ...result, stopped: Reason.Timeout }
    // listed by real path (the directory the rules were judged on); unreadable (EACCES) throws: a fault
    let entries: Entry[]
    try {
      const listing = ctx.listings.list(frame.real, turns)
      // only a big directory's listing is a promise (it is read between turns): no other costs one
      entries = (listing instanceof Promise ? await listing : listing) ?? []
    } catch (err) {
      // told to stop while a big directory was read
      if (ctx.signal.aborted) return { ...result, stopped: Reason.Timeout }
      // deeper than a path can be long: what is below is there, unseen
      if ((err as NodeJS.ErrnoException).code === 'ENAMETOOLONG')
        return { ...result, stopped: Reason.WalkLimit }
      throw err
    }
    result.entriesScanned += entries.length
    if (result.entriesScanned > ctx.maxEntries) return { ...result, stopped: Reason.WalkLimit }
    const subdirs: Frame[] = []
    for (const entry of entries) {
      // judging a big listing holds the event loop as long as reading it did
      if (turns.due()) {
        await turns.give()
        if (ctx.signal.aborted) return { ...result, stopped: Reason.Timeout }
      }
      const name = entry.name
      if (name === '.git' || (name === 'node_modules' && !plan.namesNodeModules)) continue
      const rel = frame.rel === '' ? name : `${frame.rel}/${name}`
      const matches = plan.matches(rel)
      const isLink = entry.isSymbolicLink()
      const enterable = isLink || entry.isDirectory()
      const mayEnter = enterable && plan.mayEnter(name, frame.depth + 1)
      // neither a match nor a directory that may hold one: no syscall
      if (!matches && !mayEnter) continue
      const seen: Seen = isLink
        ? followLink(childPath(frame.real, name), realRoot, plan)
        : { real: childPath(frame.real, name), isDir: entry.isDirectory() }
      if (seen === 'hidden') continue
      if ('why' in seen) {
        if (matches) reject(result, rel, seen.why)
        continue
      }
      if (matches && (seen.isDir || !plan.dirOnly) && (!agent || reaches(agent, rel, ctx, result)))
        return { ...result, match: rel }
      const mayRepeat = isLink || frame.linked
      const loops = mayRepeat && repeats(frame, seen.real)
      if (seen.isDir && mayEnter && !loops)
        subdirs.push({
          rel,
          real: seen.real,
          depth: frame.depth + 1,
          parent: frame,
          linked: frame.linked || isLink,
        })
    }
    // files of a directory are tried before any subdirectory; subdirectories in listing order
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as Frame)
    if (turns.over()) await turns.give()
  }
  return result
}

// A symlink by its target: not there (dangling, a loop), outside the workspace, or hidden from the walk.
function followLink(path: string, realRoot: string, plan: GlobPlan): Seen {
  let real: string
  try {
    real = realPath(path)
  } catch (err) {
    if (isMissing(err)) return { why: Rejection.DanglingSymlink }
    throw err
  }
  if (!isInside(real, realRoot)) return { why: Rejection.SymlinkEscapesWorkspace }
  if (hiddenByRealPath(real, realRoot, plan)) return 'hidden'
  return { real, isDir: statSync(fsPath(real)).isDirectory() }
}

// The walk rules by real path: nothing in .git/, nothing in node_modules/ unless the pattern names it.
export function hiddenByRealPath(real: string, realRoot: string, plan: GlobPlan): boolean {
  // below "/ws", "/ws/a/.git" is ["", "a", ".git"]; below "/", "/.git" is [".git"]
  const segments = real.slice(realRoot.length).split('/')
  return segments.includes('.git') || (!plan.namesNodeModules && segments.includes('node_modules'))
}

// Whether a directory's real path is already that of a directory on the frame's own path: entering it loops.
export function repeats(frame: Frame | undefined, real: string): boolean {
  for (let f: Frame | undefined = frame; f; f = f.parent) if (f.real === real) return true
  return false
}

export function childPath(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`
}

function reject(result: WalkResult, path: string, why: Rejection): void {
  if (result.rejected.length < MAX_REJECTED) result.rejected.push({ path, why })
}

// Whether the agent can reach a match; one it cannot is listed, and the walk goes on.
function reaches(agent: AgentAccess, rel: string, ctx: CheckContext, result: WalkResult): boolean {
  if (reachable(join(ctx.workspace, rel), agent.who, agent.cache)) return true
  reject(result, rel, Rejection.Unreachable)
  return false
}

// Why a symlink does not count; null when it points at something of the wrong type (not a rejection).
export function linkProblem(abs: string, realRoot: string, dirOnly: boolean): Rejection | null | undefined {
  let target: string
  try {
    target = realPath(abs)
  } catch (err) {
    if (isMissing(err)) return Rejection.DanglingSymlink
    throw err
  }
  if (!isInside(target, realRoot)) return Rejection.SymlinkEscapesWorkspace
  if (dirOnly && !statSync(fsPath(target)).isDirectory()) return null
  return undefined
}
