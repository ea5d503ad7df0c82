// The baseline step: HEAD and a tree id of the working state, untracked files included, via a temporary index.
//
// `git add` on a temporary index would run the repository's clean filters, eol conversion and fsmonitor.
// Instead the paths come from `status` against that index while it is still empty (HEAD's and the
// untracked files, comparing no content), every blob is hashed with `hash-object --no-filters`, the
// index is written with `update-index -z --index-info` (no worktree read), symlinks with
// `update-index --add` (git reads the link's text; no filter applies to a link), then `write-tree`.
// None of these runs a filter, a hook or fsmonitor; the real index is never read or written and nothing
// is committed. The worker writes nothing in the scratch directory: git, running as the agent, writes
// the temporary index there, and nothing else.
import { createHash } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { lstat, mkdtemp, open, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Baseline, PreflightReport } from '../src/contract/index.js'
import { agentScratch } from './identity.js'
import { begin, type Job } from './job.js'
import type { GitRun } from './run/git-env.js'
import type { GitRunner } from './run/job-git.js'

const GITLINK = '160000'
const SLASH = 0x2f

// A fresh directory for the temporary index, writable by whoever runs git, and its removal when the
// baseline is taken (none: it is removed with the dispatch's other directories).
export type ScratchMaker = () => Promise<{ dir: string; remove?(): Promise<void> }>

const tmpScratch: ScratchMaker = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'preflight-baseline-'))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

// The step as the dispatch runs it: as the agent, its temporary index in the slot uid's scratch
// directory; the worktree's top and HEAD as verify's git check found them, when it ran.
export async function baseline(
  job: Job,
  dir: string,
  report: PreflightReport,
): Promise<Baseline | undefined> {
  await begin(job, 'baseline')
  const { identity } = job
  // with an identity, the temporary index lives in a directory of the slot uid's that no agent can reach
  const makeScratch = identity ? () => agentScratch(job.deps.config.workdir, job.name, identity) : undefined
  const where = probedWhere(report)
  // as the agent (job.git): the objects it writes are the agent's, and it reaches nothing the agent cannot
  return captureBaseline(dir, job.git.run, {
    timeoutMs: job.deps.config.baselineGitTimeoutMs,
    ...(makeScratch ? { makeScratch } : {}),
    ...(where ? { where } : {}),
  })
}

// The worktree's top and HEAD, as a git requirement's check saw them (met or unmet, never an error): the
// same `rev-parse` the baseline would run, run by verify as the agent, in the same directory, moments
// before — the agent has not started, and with --agent-uid setup's processes were swept before verify
// (without it, a process setup detached could move HEAD either way). One process fewer a dispatch.
// Anything else — no git requirement, an error, no worktree — and the baseline asks git itself.
export function probedWhere(report: Pick<PreflightReport, 'results'>): Where | undefined {
  const git = report.results.find((r) => r.kind === 'git' && r.status !== 'error')
  const { toplevel, head } = git?.observed ?? {}
  if (typeof toplevel !== 'string' || toplevel === '') return undefined
  return { root: toplevel, head: typeof head === 'string' && head !== '' ? head : null }
}

// The top of the worktree and HEAD's commit (null when HEAD is unborn).
export interface Where {
  root: string
  head: string | null
}

// File names are bytes end to end (git's -z output in, stdin records out): a name that is not valid
// UTF-8 is recorded as it is, never dropped or decoded into another name.
// undefined when the workspace is not inside a git worktree: there is no state to record.
// `timeoutMs` bounds each git run. Five git runs (six with links) for any workspace, four when `where`
// is known: each costs a process, which is most of the baseline's price. Two when the working state is
// HEAD's own (asHead below), as it is after a clone and a setup that wrote only ignored files.
export async function captureBaseline(
  workspace: string,
  git: GitRunner,
  {
    timeoutMs,
    makeScratch = tmpScratch,
    where,
  }: { timeoutMs?: number; makeScratch?: ScratchMaker; where?: Where } = {},
): Promise<Baseline | undefined> {
  const found = where ?? (await findWhere(workspace, git, timeoutMs))
  if (!found) return undefined
  const { root, head } = found
  const scratch = await makeScratch()
  try {
    // a temporary index that starts empty: the real one is never read or written
    const env = { GIT_INDEX_FILE: join(scratch.dir, 'index') }
    const run = (args: string[], input?: Buffer) => must(git(root, args, { env, input, timeoutMs }), args)
    const entries = await listEntries(run)
    if (head && (await asHead(root, entries))) {
      return { head, tree: (await run(['rev-parse', '--verify', '--quiet', `${head}^{tree}`])).stdout.trim() }
    }
    const { blobs, links } = await hashEntries(root, entries, run)
    // what is gone is simply not written: no removal, so no file/directory conflict either
    await run(['update-index', '-z', '--index-info'], indexInfo(blobs))
    // a new entry's mode is the link's own, whatever core.symlinks says (it only keeps an old entry's)
    const addLinks = ['update-index', '--add', '-z', '--stdin']
    if (links.length > 0) await run(addLinks, Buffer.concat(links.flatMap((p) => [p, Buffer.from([0])])))
    const tree = (await run(['write-tree'])).stdout.trim()
    return { head, tree }
  } finally {
    await scratch.remove?.()
  }
}

type Run = (args: string[], input?: Buffer) => Promise<GitRun>

// The top and HEAD at once: exit 1 with the top alone when HEAD is unborn, 128 outside a worktree.
async function findWhere(workspace: string, git: GitRunner, timeoutMs?: number): Promise<Where | undefined> {
  const rootAndHead = ['rev-parse', '--show-toplevel', '--verify', '--quiet', 'HEAD^{commit}']
  const run = await git(workspace, rootAndHead, { timeoutMs })
  const [root, commit] = run.stdout.split('\n')
  if ((run.exitCode !== 0 && run.exitCode !== 1) || !root) return undefined
  return { root, head: run.exitCode === 0 && commit ? commit.trim() : null }
}

interface Entry {
  path: Buffer
  // a submodule: the commit HEAD records for it, kept as it is (its files belong to it)
  gitlink?: string
  // a path of HEAD: its mode and object id there
  inHead?: { mode: string; id: string }
}

// Paths in HEAD and files git does not ignore, from one `status` against the empty temporary index:
// every path of HEAD is "deleted" from it (a `1` record with its HEAD mode and id), every file git does
// not ignore is untracked (`?`), tracked ones included — but not a tracked file that matches .gitignore:
// HEAD has it. With nothing in that index there is nothing to rename and no submodule to ignore, whatever
// the repository's config says.
async function listEntries(run: Run): Promise<Entry[]> {
  const entries = new Map<string, Entry>()
  const status = await run(STATUS)
  for (const record of split(status.stdoutBytes)) {
    // latin1: one character a byte, so an offset in the text is one in the record
    const text = record.toString('latin1')
    if (text.startsWith('1 ')) {
      // `1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>`: eight fields, then the path, which may hold spaces
      const fields = text.split(' ', 8)
      const at = fields.reduce((sum, field) => sum + field.length + 1, 0)
      const path = record.subarray(at)
      const [mode = '', id = ''] = [fields[3], fields[6]]
      entries.set(text.slice(at), mode === GITLINK ? { path, gitlink: id } : { path, inHead: { mode, id } })
    } else if (text.startsWith('? ')) {
      // A nested repository shows as "dir/": its files belong to it, not to this tree.
      const key = text.slice(2)
      if (!key.endsWith('/') && !entries.has(key)) entries.set(key, { path: record.subarray(2) })
    } else {
      throw new Error(
        `git status wrote a record the baseline does not read: ${JSON.stringify(text.slice(0, 80))}`,
      )
    }
  }
  return [...entries.values()]
}

const STATUS = ['status', '--porcelain=v2', '-z', '--untracked-files=all']

interface Blob {
  path: Buffer
  mode: string
  sha: string
}

async function hashEntries(
  root: string,
  entries: Entry[],
  run: Run,
): Promise<{ blobs: Blob[]; links: Buffer[] }> {
  const gitlinks: Blob[] = []
  const files: { path: Buffer; mode: string }[] = []
  const links: Buffer[] = []
  const realDir = inRealDirs(root)
  for (const entry of entries) {
    if (entry.gitlink !== undefined) {
      gitlinks.push({ path: entry.path, mode: GITLINK, sha: entry.gitlink })
      continue
    }
    const stat = (await realDir(entry.path))
      ? await lstat(inside(root, entry.path)).catch(() => undefined)
      : undefined
    // a link's blob is its text, which update-index --add reads; hashing the path would follow the link
    if (stat?.isSymbolicLink()) links.push(entry.path)
    else if (stat?.isFile()) files.push({ path: entry.path, mode: stat.mode & 0o100 ? '100755' : '100644' })
    // anything else (gone, a directory now, below a link) is not in the tree
  }
  if (files.length === 0) return { blobs: gitlinks, links }
  // one git for every file, its names on stdin as bytes: any name, UTF-8 or not, and no command-line bound
  const out = await run(
    ['hash-object', '-w', '--no-filters', '--stdin-paths'],
    Buffer.concat(files.map((f) => quoted(f.path))),
  )
  const shas = out.stdout.trim().split('\n')
  const blobs = files.map((f, i) => ({ path: f.path, mode: f.mode, sha: shas[i] ?? '' }))
  return { blobs: [...gitlinks, ...blobs], links }
}

// Whether the tree of the working state is HEAD's: nothing but HEAD's paths, each with HEAD's mode and
// the object id of its bytes as they are (what hash-object --no-filters and update-index would give).
// Hashed in the worker, which reads only a regular file with one link (never a hard link to a file
// outside) or a link's own text, opened without following a link or blocking on a FIFO, in real
// directories; anything else, or more than SAME_AS_HEAD_BYTES in all, is left to git's full path. The
// tree is then HEAD's own, as git has it, rather than one write-tree would rewrite.
async function asHead(root: string, entries: Entry[]): Promise<boolean> {
  const realDir = inRealDirs(root)
  let budget = SAME_AS_HEAD_BYTES
  for (const { path, gitlink, inHead } of entries) {
    if (gitlink !== undefined) continue
    const algorithm = inHead && ID_ALGORITHM[inHead.id.length]
    if (!inHead || !algorithm || !(await realDir(path))) return false
    const at = inside(root, path)
    const info = await lstat(at).catch(() => undefined)
    let bytes: Buffer | undefined
    if (info?.isSymbolicLink()) {
      bytes =
        inHead.mode === '120000'
          ? await readlink(at, { encoding: 'buffer' }).catch(() => undefined)
          : undefined
    } else if (info?.isFile() && inHead.mode === (info.mode & 0o100 ? '100755' : '100644')) {
      budget -= info.size
      bytes = budget >= 0 ? await readRegular(at, info) : undefined
    }
    if (!bytes || blobId(algorithm, bytes) !== inHead.id) return false
  }
  return true
}

const SAME_AS_HEAD_BYTES = 32 * 1024 * 1024
const ID_ALGORITHM: Record<number, string> = { 40: 'sha1', 64: 'sha256' }

// The bytes of the regular file lstat saw at `at`, or undefined: a link, FIFO or device swapped in
// since, a second link to it, a size that changed.
export async function readRegular(at: Buffer, seen: Pick<Stats, 'dev' | 'ino' | 'size'>) {
  const file = await open(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  )
  if (!file) return undefined
  try {
    const info = await file.stat()
    if (!info.isFile() || info.nlink !== 1 || info.dev !== seen.dev || info.ino !== seen.ino) return undefined
    const bytes = await file.readFile()
    return bytes.length === seen.size ? bytes : undefined
  } finally {
    await file.close()
  }
}

function blobId(algorithm: string, bytes: Buffer): string {
  return createHash(algorithm).update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
}

// A name as one --stdin-paths line, C-quoted (git unquotes a line that begins with a double quote): a
// newline, a carriage return or a leading quote in a name cannot split or change it. Bytes of 0x80 and
// above pass as they are.
function quoted(path: Buffer): Buffer {
  const out: number[] = [DQUOTE]
  for (const byte of path) {
    if (byte === DQUOTE || byte === BACKSLASH) out.push(BACKSLASH, byte)
    else if (byte < 0x20 || byte === 0x7f)
      out.push(BACKSLASH, ...Buffer.from(byte.toString(8).padStart(3, '0')))
    else out.push(byte)
  }
  out.push(DQUOTE, NEWLINE)
  return Buffer.from(out)
}

const DQUOTE = 0x22
const BACKSLASH = 0x5c
const NEWLINE = 0x0a

// `root/path` as bytes: the path may not be valid UTF-8.
function inside(root: string, path: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${root}/`), path])
}

// `<mode> <sha>\t<path>\0` records for update-index -z --index-info.
function indexInfo(entries: { path: Buffer; mode: string; sha: string }[]): Buffer {
  return Buffer.concat(
    entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.sha}\t`), e.path, Buffer.from([0])]),
  )
}

// lstat follows symlinks in the parent directories: with a tracked a/b and `a` now a link to /etc,
// lstat(root/a/b) would read outside the workspace. So a path only counts when every directory above
// it, checked from the top, is a real directory; otherwise it is gone (git records the link `a` itself).
function inRealDirs(root: string): (path: Buffer) => Promise<boolean> {
  const known = new Map<string, boolean>()
  return async (path) => {
    for (let at = path.indexOf(SLASH); at !== -1; at = path.indexOf(SLASH, at + 1)) {
      const dir = path.subarray(0, at)
      const key = dir.toString('latin1')
      let real = known.get(key)
      if (real === undefined) {
        real = (await lstat(inside(root, dir)).catch(() => undefined))?.isDirectory() === true
        known.set(key, real)
      }
      if (!real) return false
    }
    return true
  }
}

async function must(pending: Promise<GitRun>, args: string[]): Promise<GitRun> {
  const res = await pending
  if (res.exitCode !== 0) throw new Error(`git ${args[0]} failed (${res.exitCode}): ${res.stderr.trim()}`)
  return res
}

function split(z: Buffer): Buffer[] {
  const out: Buffer[] = []
  for (let from = 0; from < z.length; ) {
    const end = z.indexOf(0, from)
    const stop = end === -1 ? z.length : end
    if (stop > from) out.push(z.subarray(from, stop))
    from = stop + 1
  }
  return out
}
