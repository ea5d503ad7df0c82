// What a traced program tried to use, read from strace's lines (`-f -y -s 4096 -o FILE`, docs/attribution.md):
// the programs it looked up on the PATH, where each was found or that every entry was searched in vain,
// and the workspace files it opened that were not there.
import { basename, dirname, isAbsolute, join, relative } from 'node:path'
import { MAX_OBSERVED_EXEC, MAX_OBSERVED_PATHS } from '../../src/contract/observed.js'

export interface ExecNeed {
  name: string
  // where it was found (stat'ed, accessed or executed); absent when every PATH entry was searched in vain
  path?: string
  // an exec of it was tried (it ran, or failed to): not only looked up, as `command -v` does
  ran?: boolean
}

export interface Needs {
  exec: ExecNeed[]
  // workspace-relative
  paths: string[]
  // workspace-relative files opened for reading that were there (`preflight learn` only)
  read?: string[]
  // the bounds below cut the record, or the tracer could not read some calls
  cut: boolean
  // why, when the tracer says more of the record than the calls (preflight-trace's unreadable calls)
  note?: string
}

// A test suite looks up hundreds of names and opens thousands of files: the record keeps the first, as
// many as a completion carries.
const MAX_EXEC = MAX_OBSERVED_EXEC
const MAX_PATHS = MAX_OBSERVED_PATHS

// The calls that look a name up or open a file, each with where its path argument is. Not statx: shells,
// Python's and Go's lookups stat with newfstatat, Node and Rust look up by execve; statx is what Node's
// module resolution stats with, by the thousand, and tracing it cost a test suite 12 % of its time
// (bench:observe: 1.23 against 1.11 without it).
const PATH_ARG: Record<string, { dirfd: boolean }> = {
  execve: { dirfd: false },
  execveat: { dirfd: true },
  open: { dirfd: false },
  openat: { dirfd: true },
  stat: { dirfd: false },
  lstat: { dirfd: false },
  newfstatat: { dirfd: true },
  access: { dirfd: false },
  faccessat: { dirfd: true },
  faccessat2: { dirfd: true },
}
export const TRACED_CALLS = Object.keys(PATH_ARG)

const OPENS = new Set(['open', 'openat'])
const ABSENT = new Set(['ENOENT', 'ENOTDIR'])
// a lookup that failed for these did not find the program there
const NOT_THERE = new Set(['ENOENT', 'ENOTDIR', 'EACCES'])
// what programs read of their own there: git's repository, installed packages
const NOT_A_NEED = /(^|\/)(\.git|node_modules)(\/|$)/

interface Call {
  name: string
  // resolved against the call's directory (`-y`); undefined when it cannot be
  path: string | undefined
  ok: boolean
  errno: string | undefined
  args: string
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', v: '\v', f: '\f' }

// Text as strace prints it, from `start` to the first unescaped `close`: backslash escapes decoded, and
// the bytes (strace escapes every byte that is not printable ASCII) read as UTF-8, as the kernel got them.
function readEscaped(text: string, start: number, close: string): { value: string; end: number } | undefined {
  let value = ''
  for (let i = start; i < text.length; i++) {
    const c = text[i] as string
    if (c === close) return { value: Buffer.from(value, 'latin1').toString('utf8'), end: i + 1 }
    if (c !== '\\') {
      value += c
      continue
    }
    const next = text[++i]
    const octal = /^[0-7]{1,3}/.exec(text.slice(i, i + 3))
    if (next === 'x') {
      value += String.fromCharCode(Number.parseInt(text.slice(i + 1, i + 3), 16))
      i += 2
    } else if (octal) {
      value += String.fromCharCode(Number.parseInt(octal[0], 8))
      i += octal[0].length - 1
    } else value += ESCAPES[next ?? ''] ?? next
  }
  return undefined
}

// `-y`'s annotation of a descriptor at `at`: `AT_FDCWD</dir>` or `3</dir>`, the directory a relative
// path is taken from (undefined without one), and where the token ends.
function readDescriptor(args: string, at: number): { dir: string | undefined; end: number } {
  const token = /^(?:AT_FDCWD|-?\d+)/.exec(args.slice(at))
  const after = at + (token?.[0].length ?? 0)
  if (!args.startsWith('</', after)) return { dir: undefined, end: after }
  const dir = readEscaped(args, after + 1, '>')
  return dir
    ? { dir: dir.value.replace(/ \(deleted\)$/, ''), end: dir.end }
    : { dir: undefined, end: args.length }
}

// Where the call's arguments end (`) = `), quoted strings and descriptors' paths skipped: a path may
// hold the same characters.
function resultAt(line: string, from: number): number {
  for (let i = from; i < line.length; i++) {
    if (line.startsWith(') = ', i)) return i
    const skip =
      line[i] === '"'
        ? readEscaped(line, i + 1, '"')
        : line.startsWith('</', i)
          ? readEscaped(line, i + 1, '>')
          : null
    if (skip === undefined) return -1
    if (skip) i = skip.end - 1
  }
  return -1
}

export function parseCall(line: string): Call | undefined {
  const open = line.indexOf('(')
  const name = line.slice(0, open)
  const where = PATH_ARG[name]
  if (open < 0 || !where) return undefined
  let at = open + 1
  let dir: string | undefined
  if (where.dirfd) {
    const descriptor = readDescriptor(line, at)
    dir = descriptor.dir
    if (!line.startsWith(', ', descriptor.end)) return undefined
    at = descriptor.end + 2
  }
  if (line[at] !== '"') return undefined
  const str = readEscaped(line, at + 1, '"')
  // a path strace cut short (-s) is no path
  if (!str || str.value === '' || line.startsWith('...', str.end)) return undefined
  const result = resultAt(line, str.end)
  if (result < 0) return undefined
  const path = isAbsolute(str.value) ? str.value : dir === undefined ? undefined : join(dir, str.value)
  const outcome = line.slice(result + 4)
  const errno = /^-1 (E[A-Z0-9]+)/.exec(outcome)?.[1]
  return { name, path, ok: !outcome.startsWith('-1'), errno, args: line.slice(str.end, result) }
}

// Reads a trace line by line; `needs()` says what it saw. `pathEntries`: the PATH the program was given.
export class TraceReader {
  private readonly pending = new Map<string, string>()
  private readonly entries: Set<string>
  private readonly lookups = new Map<string, { found?: string; missed: Set<string>; ran: boolean }>()
  private readonly missing = new Set<string>()
  private readonly read = new Set<string>()
  private cut = false

  // `wrappers`: the execs before the traced program's own (setpriv, env), not the program's needs;
  // `reads`: keep the workspace files that were read too (`preflight learn`)
  constructor(
    private readonly workspace: string,
    pathEntries: readonly string[],
    private wrappers = 0,
    private readonly reads = false,
  ) {
    this.entries = new Set(pathEntries.filter((e) => isAbsolute(e)))
  }

  line(raw: string): void {
    // `-f` prefixes each line with the pid, padded
    const head = /^(\d+) +/.exec(raw)
    if (!head) return
    const pid = head[1] as string
    let rest = raw.slice(head[0].length)
    if (rest.endsWith(' <unfinished ...>')) {
      this.pending.set(pid, rest.slice(0, -' <unfinished ...>'.length))
      return
    }
    if (rest.startsWith('<... ')) {
      const before = this.pending.get(pid)
      this.pending.delete(pid)
      if (before === undefined) return
      rest = before + rest.slice(rest.indexOf('resumed>') + 'resumed>'.length)
    }
    const call = parseCall(rest)
    if (call?.path === undefined) return
    if (this.wrappers > 0 && call.name === 'execve' && call.ok) {
      this.wrappers--
      return
    }
    if (OPENS.has(call.name)) this.opened(call, call.path)
    else this.lookup(call, call.path)
  }

  private lookup(call: Call, path: string): void {
    const dir = dirname(path)
    if (!this.entries.has(dir)) return
    const name = basename(path)
    let seen = this.lookups.get(name)
    if (!seen) {
      if (this.lookups.size >= MAX_EXEC) {
        this.cut = true
        return
      }
      seen = { missed: new Set(), ran: false }
      this.lookups.set(name, seen)
    }
    seen.ran ||= call.name.startsWith('execve')
    if (call.ok) seen.found ??= path
    else if (call.errno && NOT_THERE.has(call.errno)) seen.missed.add(dir)
  }

  private opened(call: Call, path: string): void {
    if (!OPENS.has(call.name) || call.args.includes('O_CREAT')) return
    const into = call.ok
      ? this.reads && /O_RDONLY/.test(call.args) && !call.args.includes('O_DIRECTORY')
        ? this.read
        : undefined
      : call.errno && ABSENT.has(call.errno)
        ? this.missing
        : undefined
    if (!into) return
    const rel = relative(this.workspace, path)
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || NOT_A_NEED.test(rel)) return
    if (into.size >= MAX_PATHS) {
      if (!into.has(rel)) this.cut = true
      return
    }
    into.add(rel)
  }

  // A name counts when it was found, or when every PATH entry was searched for it: a look in a few
  // entries only is a program's probe, not a need.
  needs(): Needs {
    const exec: ExecNeed[] = []
    for (const [name, seen] of this.lookups) {
      const ran = seen.ran ? { ran: true } : {}
      if (seen.found) exec.push({ name, path: seen.found, ...ran })
      else if (seen.missed.size === this.entries.size) exec.push({ name, ...ran })
    }
    return { exec, paths: [...this.missing], ...(this.reads ? { read: [...this.read] } : {}), cut: this.cut }
  }
}
