// Resolving a bare name on a PATH the way execvp does, keeping why each skipped candidate did not count.
import { accessSync, constants, lstatSync, type Stats, statSync } from 'node:fs'
import { join } from 'node:path'
import { Rejection } from '../../src/contract/reasons.js'
import { isMissing } from '../run/paths.js'
import { Access, type AgentAccess, mayAccess, reachable } from './access.js'
import type { Rejected } from './types.js'

export type Candidate = { path: string; ok: true } | { path: string; ok: false; why?: Rejection }

// One candidate: counts only as a regular file (links followed) that the agent, or without one this
// process, may execute. Synchronous on purpose: a stat costs microseconds, a promise round trip through
// the thread pool far more.
function inspectCandidate(path: string, agent: AgentAccess | undefined): Candidate {
  let info: Stats | undefined
  try {
    // throwIfNoEntry: most PATH directories do not hold the name, and an exception per miss is costly
    info = statSync(path, { throwIfNoEntry: false })
  } catch (err) {
    // a candidate this process may not even look at cannot be executed by it either
    if (isDenied(err)) return { path, ok: false, why: Rejection.NotExecutable }
    if (!isMissing(err)) throw err
  }
  if (!info) return { path, ok: false, why: isSymlink(path) ? Rejection.DanglingSymlink : undefined }
  // the agent's execvp meets EACCES in a directory it may not search, and passes over it as over a miss
  if (agent && !reachable(path, agent.who, agent.cache))
    return { path, ok: false, why: Rejection.Unreachable }
  // X_OK passes for directories: the bit means traversable, not executable
  if (info.isDirectory()) return { path, ok: false, why: Rejection.Directory }
  if (!info.isFile()) return { path, ok: false, why: Rejection.NotExecutable }
  const executable = agent ? mayAccess(agent.who, info, Access.Execute) : mayExecute(path)
  return executable ? { path, ok: true } : { path, ok: false, why: Rejection.NotExecutable }
}

// access(X_OK) as this process: for root, true when any execute bit is set.
function mayExecute(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
  } catch {
    return false
  }
  return true
}

export interface Resolution {
  found: string | undefined
  rejected: Rejected[]
}

// The first candidate that counts, in PATH order; the ones skipped before it, with why. With `agent`,
// what counts is what the agent's uid/gid may reach and execute.
export function resolveOnDirs(name: string, dirs: readonly string[], agent?: AgentAccess): Resolution {
  const rejected: Rejected[] = []
  for (const dir of dirs) {
    const candidate = inspectCandidate(join(dir, name), agent)
    if (candidate.ok) return { found: candidate.path, rejected }
    if (candidate.why) rejected.push({ path: candidate.path, why: candidate.why })
  }
  return { found: undefined, rejected }
}

// Whether `path` itself is a symlink; an error other than a miss (EIO, EACCES) is thrown, never read as "no".
export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true
  } catch (err) {
    if (isMissing(err)) return false
    throw err
  }
}

function isDenied(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'EACCES' || code === 'EPERM'
}
