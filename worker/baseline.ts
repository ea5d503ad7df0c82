// The baseline step: HEAD and a tree id of the working state, untracked files included, via a temporary index.
//
// `git add` on a temporary index would run the repository's clean filters, eol conversion and fsmonitor.
// Instead every blob is hashed with `hash-object --no-filters` and the index is written with
// `update-index --cacheinfo` (no worktree read), then `write-tree`. None of these runs a filter, a hook
// or fsmonitor; the real index is never read or written and nothing is committed.
import { lstat, mkdtemp, readlink, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { GitRun } from './checks/git-env.js'

// Runs git in `cwd` with the filtered git environment plus `env` (the caller supplies the safety flags).
export type GitRunner = (cwd: string, args: string[], env?: Record<string, string>) => Promise<GitRun>

export interface Baseline {
  head: string | null
  tree: string
}

const CHUNK = 500
const CHUNK_CHARS = 64 * 1024
const GITLINK = '160000'

// A fresh directory for the temporary index, writable by whoever runs git.
export type ScratchMaker = () => Promise<string>

const tmpScratch: ScratchMaker = () => mkdtemp(join(tmpdir(), 'preflight-baseline-'))

// undefined when the workspace is not inside a git worktree: there is no state to record.
export async function captureBaseline(
  workspace: string,
  git: GitRunner,
  makeScratch: ScratchMaker = tmpScratch,
): Promise<Baseline | undefined> {
  const top = await git(workspace, ['rev-parse', '--show-toplevel'])
  if (top.exitCode !== 0) return undefined
  const root = top.stdout.trim()
  const scratch = await makeScratch()
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') }
    const run = (args: string[]) => must(git(root, args, env), args)
    const head = await resolveHead(root, git)
    if (head) await run(['read-tree', head])
    const entries = await listEntries(run)
    const { blobs, gone } = await hashEntries(root, scratch, entries, run)
    // Removals first: a path that changed type (file x → directory x/, or the reverse) is in `gone`
    // under its old name, and adding the new one next to it would be a file/directory conflict.
    for (const batch of chunks(gone)) await run(['update-index', '--force-remove', '--', ...batch])
    for (const batch of chunks(blobs, (b) => b.path.length + 60)) {
      await run([
        'update-index',
        '--add',
        ...batch.flatMap((b) => ['--cacheinfo', `${b.mode},${b.sha},${b.path}`]),
      ])
    }
    const tree = (await run(['write-tree'])).stdout.trim()
    return { head, tree }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

async function resolveHead(root: string, git: GitRunner): Promise<string | null> {
  const res = await git(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'])
  return res.exitCode === 0 ? res.stdout.trim() : null
}

interface Entry {
  path: string
  gitlink: boolean
}

// Paths in HEAD (from the temporary index) and untracked, not ignored files; gitlinks are kept as recorded.
async function listEntries(run: (args: string[]) => Promise<GitRun>): Promise<Entry[]> {
  const staged = await run(['ls-files', '-z', '--stage'])
  const others = await run(['ls-files', '-z', '--others', '--exclude-standard'])
  const entries = new Map<string, Entry>()
  for (const record of split(staged.stdout)) {
    const tab = record.indexOf('\t')
    const path = record.slice(tab + 1)
    entries.set(path, { path, gitlink: record.startsWith(GITLINK) })
  }
  // A nested repository shows as "dir/": its files belong to it, not to this tree.
  for (const path of split(others.stdout))
    if (!path.endsWith('/')) entries.set(path, { path, gitlink: false })
  return [...entries.values()]
}

interface Blob {
  path: string
  mode: string
  sha: string
}

async function hashEntries(
  root: string,
  scratch: string,
  entries: Entry[],
  run: (args: string[]) => Promise<GitRun>,
): Promise<{ blobs: Blob[]; gone: string[] }> {
  const files: { path: string; mode: string; source: string }[] = []
  const gone: string[] = []
  const realDir = inRealDirs(root)
  for (const [i, entry] of entries.entries()) {
    if (entry.gitlink) continue
    const stat = (await realDir(entry.path))
      ? await lstat(join(root, entry.path)).catch(() => undefined)
      : undefined
    if (stat?.isSymbolicLink()) {
      // A symlink's blob is its target text; hashing the path would follow the link.
      const source = join(scratch, `link-${i}`)
      await writeFile(source, await readlink(join(root, entry.path), { encoding: 'buffer' }))
      files.push({ path: entry.path, mode: '120000', source })
    } else if (stat?.isFile()) {
      files.push({ path: entry.path, mode: stat.mode & 0o100 ? '100755' : '100644', source: entry.path })
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
}

// lstat follows symlinks in the parent directories: with a tracked a/b and `a` now a link to /etc,
// lstat(root/a/b) would read outside the workspace. So a path only counts when every directory above
// it, checked from the top, is a real directory; otherwise it is gone (git records the link `a` itself).
function inRealDirs(root: string): (path: string) => Promise<boolean> {
  const known = new Map<string, boolean>()
  return async (path) => {
    const parts = path.split('/')
    for (let n = 1; n < parts.length; n++) {
      const dir = parts.slice(0, n).join('/')
      let real = known.get(dir)
      if (real === undefined) {
        real = (await lstat(join(root, dir)).catch(() => undefined))?.isDirectory() === true
        known.set(dir, real)
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

function split(z: string): string[] {
  return z.split('\0').filter((s) => s.length > 0)
}

// Batches small enough for one command line (count and characters both bounded).
function chunks<T>(list: T[], size: (item: T) => number = (item) => String(item).length): T[][] {
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
