// The baseline step: HEAD and a tree id of the working state, untracked files included, via a temporary index.
//
// `git add` on a temporary index would run the repository's clean filters, eol conversion and fsmonitor.
// Instead every blob is hashed with `hash-object --no-filters` and the index is written with
// `update-index -z --index-info` (no worktree read), then `write-tree`. None of these runs a filter, a hook
// or fsmonitor; the real index is never read or written and nothing is committed.
import { lstat, mkdtemp, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Baseline } from '../src/contract/index.js'
import type { GitRun } from './run/git-env.js'
import type { GitRunner } from './run/job-git.js'

const CHUNK = 500
const CHUNK_CHARS = 64 * 1024
const GITLINK = '160000'
const SLASH = 0x2f

// A fresh directory for the temporary index, writable by whoever runs git.
export type ScratchMaker = () => Promise<string>

const tmpScratch: ScratchMaker = () => mkdtemp(join(tmpdir(), 'preflight-baseline-'))

// File names are bytes end to end (git's -z output in, stdin records out): a name that is not valid
// UTF-8 is recorded as it is, never dropped or decoded into another name.
// undefined when the workspace is not inside a git worktree: there is no state to record.
// `timeoutMs` bounds each git run.
export async function captureBaseline(
  workspace: string,
  git: GitRunner,
  { timeoutMs, makeScratch = tmpScratch }: { timeoutMs?: number; makeScratch?: ScratchMaker } = {},
): Promise<Baseline | undefined> {
  const top = await git(workspace, ['rev-parse', '--show-toplevel'], { timeoutMs })
  if (top.exitCode !== 0) return undefined
  const root = top.stdout.trim()
  const scratch = await makeScratch()
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') }
    const run = (args: string[], input?: Buffer) => must(git(root, args, { env, input, timeoutMs }), args)
    const head = await resolveHead((args) => git(root, args, { timeoutMs }))
    if (head) await run(['read-tree', head])
    const entries = await listEntries(run)
    const { blobs, gone } = await hashEntries(root, scratch, entries, run)
    // Removals first (mode 0): a path that changed type (file x → directory x/, or the reverse) is in
    // `gone` under its old name, and adding the new one next to it would be a file/directory conflict.
    const removals = gone.map((path) => ({ path, mode: '0', sha: '0'.repeat(40) }))
    await run(['update-index', '-z', '--index-info'], indexInfo(removals))
    await run(['update-index', '-z', '--index-info'], indexInfo(blobs))
    const tree = (await run(['write-tree'])).stdout.trim()
    return { head, tree }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

async function resolveHead(git: Run): Promise<string | null> {
  const res = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'])
  return res.exitCode === 0 ? res.stdout.trim() : null
}

type Run = (args: string[], input?: Buffer) => Promise<GitRun>

interface Entry {
  path: Buffer
  gitlink: boolean
}

// Paths in HEAD (from the temporary index) and untracked, not ignored files; gitlinks are kept as recorded.
async function listEntries(run: Run): Promise<Entry[]> {
  const staged = await run(['ls-files', '-z', '--stage'])
  const others = await run(['ls-files', '-z', '--others', '--exclude-standard'])
  const entries = new Map<string, Entry>()
  for (const record of split(staged.stdoutBytes)) {
    const path = record.subarray(record.indexOf('\t') + 1)
    entries.set(path.toString('latin1'), { path, gitlink: record.toString('latin1').startsWith(GITLINK) })
  }
  // A nested repository shows as "dir/": its files belong to it, not to this tree.
  for (const path of split(others.stdoutBytes))
    if (path.at(-1) !== SLASH) entries.set(path.toString('latin1'), { path, gitlink: false })
  return [...entries.values()]
}

interface Blob {
  path: Buffer
  mode: string
  sha: string
}

async function hashEntries(
  root: string,
  scratch: string,
  entries: Entry[],
  run: Run,
): Promise<{ blobs: Blob[]; gone: Buffer[] }> {
  const files: { path: Buffer; mode: string; source: string }[] = []
  const gone: Buffer[] = []
  const realDir = inRealDirs(root)
  for (const [i, entry] of entries.entries()) {
    if (entry.gitlink) continue
    const abs = inside(root, entry.path)
    const stat = (await realDir(entry.path)) ? await lstat(abs).catch(() => undefined) : undefined
    if (stat?.isSymbolicLink()) {
      // A symlink's blob is its target text; hashing the path would follow the link.
      const source = join(scratch, `link-${i}`)
      await writeFile(source, await readlink(abs, { encoding: 'buffer' }))
      files.push({ path: entry.path, mode: '120000', source })
    } else if (stat?.isFile()) {
      files.push({
        path: entry.path,
        mode: stat.mode & 0o100 ? '100755' : '100644',
        source: await nameFor(entry, i),
      })
    } else {
      gone.push(entry.path)
    }
  }
  const blobs: Blob[] = []
  for (const batch of chunks(files, (f) => f.source.length)) {
    const out = await run(['hash-object', '-w', '--no-filters', '--', ...batch.map((f) => f.source)])
    const shas = out.stdout.trim().split('\n')
    for (const [i, f] of batch.entries()) blobs.push({ path: f.path, mode: f.mode, sha: shas[i] ?? '' })
  }
  return { blobs, gone }

  // A command line carries only text: a name that is not UTF-8 is hashed through a link in the scratch
  // directory (hash-object reads the file it points at; the file was just seen to be a regular file).
  async function nameFor(entry: Entry, i: number): Promise<string> {
    const text = entry.path.toString('utf8')
    if (Buffer.from(text, 'utf8').equals(entry.path)) return text
    const source = join(scratch, `name-${i}`)
    await symlink(inside(root, entry.path), source)
    return source
  }
}

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

// Batches small enough for one command line (count and characters both bounded).
function chunks<T>(list: T[], size: (item: T) => number): T[][] {
  const out: T[][] = []
  let batch: T[] = []
  let chars = 0
  for (const item of list) {
    if (batch.length >= CHUNK || (batch.length > 0 && chars + size(item) > CHUNK_CHARS)) {
      out.push(batch)
      batch = []
      chars = 0
    }
    batch.push(item)
    chars += size(item) + 1
  }
  if (batch.length > 0) out.push(batch)
  return out
}
