// Resolving a bare name on a PATH the way execvp does, keeping why each skipped candidate did not count.
import { accessSync, constants, lstatSync, type Stats, statSync } from 'node:fs'
import { join } from 'node:path'
import { Rejection } from '../../src/contract/index.js'
import type { Rejected } from './types.js'

export type Candidate = { path: string; ok: true } | { path: string; ok: false; why?: Rejection }

// One candidate: counts only as a regular file (links followed) that this process may execute.
// Synchronous on purpose: a stat costs microseconds, a promise round trip through the thread pool far more.
function inspectCandidate(path: string): Candidate {
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
  // X_OK passes for directories: the bit means traversable, not executable
  if (info.isDirectory()) return { path, ok: false, why: Rejection.Directory }
  if (!info.isFile()) return { path, ok: false, why: Rejection.NotExecutable }
  try {
    accessSync(path, constants.X_OK)
  } catch {
    return { path, ok: false, why: Rejection.NotExecutable }
  }
  return { path, ok: true }
}

export interface Resolution {
  found: string | undefined
  rejected: Rejected[]
}

// The first candidate that counts, in PATH order; the ones skipped before it, with why.
export function resolveOnDirs(name: string, dirs: readonly string[]): Resolution {
  const rejected: Rejected[] = []
  for (const dir of dirs) {
    const candidate = inspectCandidate(join(dir, name))
    if (candidate.ok) return { found: candidate.path, rejected }
    if (candidate.why) rejected.push({ path: candidate.path, why: candidate.why })
  }
  return { found: undefined, rejected }
}

export function findExecutable(name: string, dirs: readonly string[]): string | undefined {
  return resolveOnDirs(name, dirs).found
}

export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() ?? false
  } catch {
    return false
  }
}

// A PATH entry or path that is not there, or runs through a file or a link loop: nothing to find.
export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'ENAMETOOLONG'
}

function isDenied(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  return code === 'EACCES' || code === 'EPERM'
}
