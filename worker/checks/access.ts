// What the agent's uid/gid may do with an entry, decided from mode bits as the kernel's permission check does.
// Mode bits only: POSIX ACLs, LSMs (SELinux, AppArmor) and mount options (noexec) are not consulted.
import { constants, lstatSync, readlinkSync, type Stats, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { fsPath, pathOf } from './names.js'
import type { AgentIdentity, CheckContext } from './types.js'

export const Access = { Read: 0o4, Write: 0o2, Execute: 0o1 } as const
export type Access = (typeof Access)[keyof typeof Access]

// The kernel gives up on a lookup that follows more symlinks than this (ELOOP).
const MAX_LINKS = 40

// A directory path (as given, or real) → its real path when the agent can reach and search it, else null.
export type SearchCache = Map<string, string | null>

// An agent identity with the search verdicts of one verify() call.
export interface AgentAccess {
  who: AgentIdentity
  cache: SearchCache
}

// The agent of this verify() call, or undefined when the checks judge for this process.
export function agentAccess(ctx: Pick<CheckContext, 'agent' | 'memo'>): AgentAccess | undefined {
  if (!ctx.agent) return undefined
  let cache = ctx.memo.get('searchable') as SearchCache | undefined
  if (!cache) {
    cache = new Map()
    ctx.memo.set('searchable', cache)
  }
  return { who: ctx.agent, cache }
}

// Whether `who` may read, write or execute (search, for a directory) an entry with these mode bits.
// Owner bits for the owner, else group bits for the group, else other bits: the first class that
// applies decides, even when a later one would grant more. Execute on a directory means search.
export function mayAccess(
  who: AgentIdentity,
  info: Pick<Stats, 'mode' | 'uid' | 'gid'>,
  want: Access,
): boolean {
  if (who.uid === 0) {
    // root reads and writes anything, searches any directory, executes a file only if some x bit is set
    if (want !== Access.Execute) return true
    return (info.mode & constants.S_IFMT) === constants.S_IFDIR || (info.mode & 0o111) !== 0
  }
  const shift = who.uid === info.uid ? 6 : who.gid === info.gid ? 3 : 0
  return ((info.mode >> shift) & want) !== 0
}

// Whether `who` can reach `path`: may search every directory the kernel looks a name up in while
// resolving it — those of the path as given and those its symlinks lead through, up to the entry's.
export function reachable(path: string, who: AgentIdentity, cache: SearchCache): boolean {
  const walk: Walk = { who, cache, links: 0 }
  const abs = resolve(path)
  const dir = enter(dirname(abs), walk)
  return dir !== null && lookup(dir, basename(abs), walk) !== null
}

interface Walk {
  who: AgentIdentity
  cache: SearchCache
  links: number
}

// The real path of directory `path` when `who` can reach it and search it; null otherwise. Memoized.
function enter(path: string, walk: Walk): string | null {
  const known = walk.cache.get(path)
  if (known !== undefined) return known
  let real: string | null = '/'
  if (path !== '/') {
    const parent = enter(dirname(path), walk)
    real = parent === null ? null : lookup(parent, basename(path), walk)
  }
  if (real !== null && !searchable(real, walk.who)) real = null
  walk.cache.set(path, real)
  // a real directory reached through searchable directories is reached the same way by its real path
  if (real !== null && !walk.cache.has(real)) walk.cache.set(real, real)
  return real
}

// The real path `name` leads to inside the real directory `dir`, which `who` may search; links followed.
function lookup(dir: string, name: string, walk: Walk): string | null {
  // `dir` is real (no links in it), so join() settles '.', '..' and '' as the kernel would
  const entry = join(dir, name)
  const info = quietly(() => lstatSync(fsPath(entry), { throwIfNoEntry: false }))
  if (!info?.isSymbolicLink()) return info ? entry : null
  if (++walk.links > MAX_LINKS) return null
  // read as bytes: a link's text may name what is not UTF-8, spelled as the walk spells it (names.ts)
  const text = quietly(() => pathOf(readlinkSync(fsPath(entry), { encoding: 'buffer' })))
  if (text === undefined) return null
  return follow(text.startsWith('/') ? enter('/', walk) : dir, text, walk)
}

// A symlink's text resolved from the real directory `start`, name by name: every directory on the way
// but the last name's must be searchable.
function follow(start: string | null, text: string, walk: Walk): string | null {
  // an empty name (a leading, doubled or trailing "/") stays where it is
  const names = text.split('/')
  let at = start
  for (const [i, name] of names.entries()) {
    if (at === null) return null
    const next = lookup(at, name, walk)
    if (i === names.length - 1) return next
    at = next === null ? null : enter(next, walk)
  }
  return at
}

// A real path: `who` may search it only if it is a directory with the search bit for `who`.
function searchable(real: string, who: AgentIdentity): boolean {
  const info = quietly(() => statSync(fsPath(real), { throwIfNoEntry: false }))
  return info?.isDirectory() === true && mayAccess(who, info, Access.Execute)
}

// undefined for an entry that is gone or that this process may not look at either; any other error (EIO)
// is thrown: the check then decides nothing rather than read a fault as "unreachable".
function quietly<T>(probe: () => T): T | undefined {
  try {
    return probe()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (isGone(code)) return undefined
    if (code === 'EACCES' || code === 'EPERM') return undefined
    throw err
  }
}

// Gone since it was listed (a race): every directory walked is real and lstat does not follow the last name,
// so the kernel gives these only for an entry removed or replaced during the walk.
const isGone = (code: string | undefined) => code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP'
