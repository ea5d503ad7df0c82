import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, link, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { captureBaseline, probedWhere, readRegular } from '../../worker/baseline.js'
import type { GitRunner } from '../../worker/run/job-git.js'
import { git, makeRepo, promisorTrap, removeAll, tempDir, writeFiles } from '../support/git-fixtures.js'
import { safeGit } from '../support/worker-git.js'

const dirs: string[] = []
afterEach(() => removeAll(dirs))

async function repo(files?: Record<string, string>) {
  const dir = await makeRepo(files)
  dirs.push(dir)
  return dir
}

function treeFiles(dir: string, tree: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of git(dir, 'ls-tree', '-r', tree).split('\n').filter(Boolean)) {
    const [meta = '', path = ''] = line.split('\t')
    out[path] = meta
  }
  return out
}

describe('captureBaseline', () => {
  it('records HEAD and a tree that includes untracked files', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    await writeFiles(dir, { 'new/untracked.txt': 'u\n' })
    const base = await captureBaseline(dir, safeGit)
    expect(base?.head).toBe(git(dir, 'rev-parse', 'HEAD'))
    expect(Object.keys(treeFiles(dir, base?.tree ?? ''))).toEqual(['a.txt', 'new/untracked.txt'])
  })

  it('gives the tree `git add -A` would give when no filters are configured', async () => {
    const dir = await repo({ 'a.txt': 'a\n', 'gone.txt': 'g\n', 'bin/run': '#!/bin/sh\n' })
    await chmod(join(dir, 'bin/run'), 0o755)
    await writeFiles(dir, {
      'a.txt': 'changed\n',
      'b.txt': 'b\n',
      '.gitignore': 'ignored/\n',
      'ignored/x': 'x',
    })
    await rm(join(dir, 'gone.txt'))
    await symlink('a.txt', join(dir, 'link'))
    const base = await captureBaseline(dir, safeGit)
    const index = join(dir, '..', `${dir.split('/').pop()}-expected-index`)
    dirs.push(index)
    execWithIndex(dir, index, 'add', '-A')
    expect(base?.tree).toBe(execWithIndex(dir, index, 'write-tree'))
  })

  // git reads --stdin-paths by lines and unquotes a line that begins with a double quote
  it('records names with a newline, a carriage return, a backslash or a leading quote as they are', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    await writeFiles(dir, { 'new\nline': '1\n', 'cr\r': '2\n', 'back\\slash': '3\n', '"quoted"': '4\n' })
    const base = await captureBaseline(dir, safeGit)
    expect(base?.tree).toBe(gitTree(dir))
    expect(Object.keys(treeFiles(dir, base?.tree ?? ''))).toHaveLength(5)
  })

  it('keeps a tracked file that .gitignore now matches, as git does', async () => {
    const dir = await repo({ 'kept.log': 'tracked\n', 'a.txt': 'a\n' })
    await writeFiles(dir, { '.gitignore': '*.log\n', 'new.log': 'ignored\n', 'kept.log': 'changed\n' })
    const base = await captureBaseline(dir, safeGit)
    expect(base?.tree).toBe(gitTree(dir))
    expect(Object.keys(treeFiles(dir, base?.tree ?? ''))).toEqual(['.gitignore', 'a.txt', 'kept.log'])
  })

  it('records an untracked link as a link where the repository says core.symlinks=false', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    git(dir, 'config', 'core.symlinks', 'false')
    await symlink('a.txt', join(dir, 'l'))
    const base = await captureBaseline(dir, safeGit)
    expect(treeFiles(dir, base?.tree ?? '').l).toMatch(/^120000 blob /)
  })

  it("keeps a submodule's commit as HEAD records it", async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    const commit = git(dir, 'rev-parse', 'HEAD')
    git(dir, 'update-index', '--add', '--cacheinfo', `160000,${commit},sub`)
    git(dir, 'commit', '-q', '-m', 'submodule')
    const base = await captureBaseline(dir, safeGit)
    expect(treeFiles(dir, base?.tree ?? '').sub).toBe(`160000 commit ${commit}`)
  })

  // The list is one `git status`: what the repository's config says of status must not change it.
  it("reads the same list whatever the repository's config says of submodules, renames and untracked files", async () => {
    const dir = await repo({ 'a.txt': 'a\n', 'moved.txt': 'm\n' })
    const commit = git(dir, 'rev-parse', 'HEAD')
    git(dir, 'update-index', '--add', '--cacheinfo', `160000,${commit},sub`)
    git(dir, 'commit', '-q', '-m', 'submodule')
    await writeFiles(dir, {
      '.gitmodules': '[submodule "sub"]\n\tpath = sub\n\tignore = all\n',
      'new/u.txt': 'u\n',
    })
    git(dir, 'mv', 'moved.txt', 'renamed.txt')
    const config: [string, string][] = [
      ['submodule.sub.ignore', 'all'],
      ['diff.ignoreSubmodules', 'all'],
      ['status.renames', 'copies'],
      ['status.showUntrackedFiles', 'no'],
      ['status.relativePaths', 'true'],
    ]
    for (const [key, value] of config) git(dir, 'config', key, value)
    const base = await captureBaseline(dir, safeGit)
    const tree = treeFiles(dir, base?.tree ?? '')
    expect(tree.sub).toBe(`160000 commit ${commit}`)
    expect(Object.keys(tree)).toEqual(['.gitmodules', 'a.txt', 'new/u.txt', 'renamed.txt', 'sub'])
  })

  // Against an empty index git writes only `1` and `?` records; another kind would be a git that reads
  // the index otherwise, and a baseline built past it would miss its paths. (A git that lies, the one
  // way to see it: a real one never writes it here.)
  it('fails rather than skip a status record it does not read', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    const renamed = Buffer.from('2 R. N... 100644 100644 100644 0 0 R100 b.txt\0a.txt\0')
    const lying: typeof safeGit = async (cwd, args, call) =>
      args[0] === 'status'
        ? { exitCode: 0, stdout: renamed.toString(), stdoutBytes: renamed, stderr: '' }
        : safeGit(cwd, args, call)
    await expect(captureBaseline(dir, lying)).rejects.toThrow(/a record the baseline does not read/)
  })

  // File names are bytes: a name that is not valid UTF-8 is neither dropped nor read at another name.
  it('records names that are not valid UTF-8 byte for byte, tracked, modified and untracked', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    const name = (text: string) => Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(text, 'latin1')])
    await writeFile(name('bad\xff.txt'), 'old\n')
    await writeFile(name('gone\xfe.txt'), 'gone\n')
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', 'odd names')
    await writeFile(name('bad\xff.txt'), 'new\n')
    await rm(name('gone\xfe.txt'))
    await writeFile(name('untracked\xfd.txt'), 'u\n')
    const base = await captureBaseline(dir, safeGit)
    const index = join(dir, '..', `${dir.split('/').pop()}-expected-index`)
    dirs.push(index)
    execWithIndex(dir, index, 'add', '-A')
    expect(base?.tree).toBe(execWithIndex(dir, index, 'write-tree'))
  })

  it('records a tree without a head for a repository with no commits', async () => {
    const dir = await tempDir()
    dirs.push(dir)
    git(dir, 'init', '-q')
    await writeFiles(dir, { 'gen/out.txt': 'generated\n' })
    const base = await captureBaseline(dir, safeGit)
    expect(base?.head).toBeNull()
    expect(Object.keys(treeFiles(dir, base?.tree ?? ''))).toEqual(['gen/out.txt'])
  })

  it('returns nothing for a directory that is not a git worktree', async () => {
    const dir = await tempDir()
    dirs.push(dir)
    expect(await captureBaseline(dir, safeGit)).toBeUndefined()
  })

  it('never commits and never touches the real index', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    await writeFiles(dir, { 'a.txt': 'changed\n', 'b.txt': 'b\n' })
    const indexPath = join(dir, '.git', 'index')
    const before = { bytes: await readFile(indexPath), mtime: (await stat(indexPath)).mtimeMs }
    const head = git(dir, 'rev-parse', 'HEAD')
    await captureBaseline(dir, safeGit)
    expect(await readFile(indexPath)).toEqual(before.bytes)
    expect((await stat(indexPath)).mtimeMs).toBe(before.mtime)
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head)
    expect(git(dir, 'rev-list', '--count', 'HEAD')).toBe('1')
    expect(git(dir, 'ls-files')).toBe('a.txt')
  })

  it('records a tracked file replaced by a directory', async () => {
    const dir = await repo({ x: 'file\n', 'keep.txt': 'k\n' })
    await rm(join(dir, 'x'))
    await writeFiles(dir, { 'x/y': 'y\n' })
    const base = await captureBaseline(dir, safeGit)
    expect(Object.keys(treeFiles(dir, base?.tree ?? ''))).toEqual(['keep.txt', 'x/y'])
    expect(base?.tree).toBe(gitTree(dir))
  })

  it('records a tracked directory replaced by a file', async () => {
    const dir = await repo({ 'd/f': 'f\n', 'd/sub/g': 'g\n', 'keep.txt': 'k\n' })
    await rm(join(dir, 'd'), { recursive: true })
    await writeFile(join(dir, 'd'), 'now a file\n')
    const base = await captureBaseline(dir, safeGit)
    expect(Object.keys(treeFiles(dir, base?.tree ?? ''))).toEqual(['d', 'keep.txt'])
    expect(base?.tree).toBe(gitTree(dir))
  })

  it('records a tracked directory replaced by a symlink to the outside as the link, reading nothing through it', async () => {
    const dir = await repo({ 'a/secret': 'inside\n', 'keep.txt': 'k\n' })
    const outside = await tempDir('preflight-outside-')
    dirs.push(outside)
    const secret = `outside the workspace ${outside}\n`
    await writeFile(join(outside, 'secret'), secret)
    await rm(join(dir, 'a'), { recursive: true })
    await symlink(outside, join(dir, 'a'))
    const base = await captureBaseline(dir, safeGit).catch((err: Error) => err)
    // The store first: a baseline that read through the link has hashed the outside file even if it then threw.
    expect(() => git(dir, 'cat-file', '-e', blobSha(secret))).toThrow()
    if (base instanceof Error) throw base
    expect(treeFiles(dir, base?.tree ?? '')).toEqual({
      a: `120000 blob ${blobSha(outside)}`,
      'keep.txt': `100644 blob ${blobSha('k\n')}`,
    })
    expect(base?.tree).toBe(gitTree(dir))
  })

  it('records a tracked symlink replaced by a directory', async () => {
    const dir = await repo({ 'target/t': 't\n' })
    await symlink('target', join(dir, 'l'))
    git(dir, 'add', 'l')
    git(dir, 'commit', '-q', '-m', 'link')
    await rm(join(dir, 'l'))
    await mkdir(join(dir, 'l'))
    await writeFiles(dir, { 'l/z': 'z\n' })
    const base = await captureBaseline(dir, safeGit)
    expect(Object.keys(treeFiles(dir, base?.tree ?? ''))).toEqual(['l/z', 'target/t'])
    expect(base?.tree).toBe(gitTree(dir))
  })

  it('runs no clean filter the repository configures and hashes the bytes as they are', async () => {
    const dir = await repo({ '.gitattributes': '* filter=marker text eol=lf\n' })
    const marker = join(dir, '..', `${dir.split('/').pop()}-filter-ran`)
    dirs.push(marker)
    git(dir, 'config', 'filter.marker.clean', `sh -c 'touch ${marker}; cat'`)
    git(dir, 'config', 'filter.marker.required', 'true')
    await writeFile(join(dir, 'crlf.txt'), 'one\r\ntwo\r\n')
    const base = await captureBaseline(dir, safeGit)
    expect(existsSync(marker)).toBe(false)
    expect(git(dir, 'cat-file', '-p', `${base?.tree}:crlf.txt`)).toBe('one\r\ntwo')
  })

  it('runs no hook and no fsmonitor the repository configures', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    const marker = join(dir, '..', `${dir.split('/').pop()}-hook-ran`)
    dirs.push(marker)
    const hooks = join(dir, '.git', 'custom-hooks')
    await writeFiles(hooks, { 'post-index-change': `#!/bin/sh\ntouch ${marker}\n` })
    await chmod(join(hooks, 'post-index-change'), 0o755)
    await writeFiles(dir, { 'fsmonitor.sh': `#!/bin/sh\ntouch ${marker}\n` })
    await chmod(join(dir, 'fsmonitor.sh'), 0o755)
    git(dir, 'config', 'core.hooksPath', hooks)
    git(dir, 'config', 'core.fsmonitor', join(dir, 'fsmonitor.sh'))
    await writeFiles(dir, { 'b.txt': 'b\n' })
    await captureBaseline(dir, safeGit)
    expect(existsSync(marker)).toBe(false)
  })
})

// The reference: plain `git` on a separate index, only where no filter or hook is configured.
function execWithIndex(dir: string, index: string, ...args: string[]): string {
  const previous = process.env.GIT_INDEX_FILE
  process.env.GIT_INDEX_FILE = index
  try {
    return git(dir, ...args)
  } finally {
    if (previous === undefined) delete process.env.GIT_INDEX_FILE
    else process.env.GIT_INDEX_FILE = previous
  }
}

// What git itself writes for the working state: HEAD read into a separate index, then `add -A`.
// Only for repositories without filters or hooks; it writes objects, so assert on the store first.
function gitTree(dir: string): string {
  const index = join(dir, '..', `${dir.split('/').pop()}-reference-index`)
  dirs.push(index)
  execWithIndex(dir, index, 'read-tree', 'HEAD')
  execWithIndex(dir, index, 'add', '-A')
  return execWithIndex(dir, index, 'write-tree')
}

function blobSha(content: string): string {
  const bytes = Buffer.from(content)
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
}

// A workspace.path workspace is whatever is on the worker's disk: its config may name a promisor remote
// whose lazy fetch would run a command. protocol.allow=never forbids every transport.
// verify's git check ran the same rev-parse moments before: the baseline takes its top and HEAD.
describe("the baseline with verify's top and HEAD", () => {
  // the git runs the baseline starts, by subcommand
  function counted(): { git: GitRunner; runs: string[] } {
    const runs: string[] = []
    const git: GitRunner = (cwd, args, call) => {
      runs.push(args[0] ?? '')
      return safeGit(cwd, args, call)
    }
    return { runs, git }
  }

  it('records the same baseline with one git run fewer: no rev-parse of its own', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    await writeFiles(dir, { 'new.txt': 'n\n' })
    const own = counted()
    const base = await captureBaseline(dir, own.git)
    const given = counted()
    const where = { root: dir, head: git(dir, 'rev-parse', 'HEAD') }
    expect(await captureBaseline(dir, given.git, { where })).toEqual(base)
    expect(own.runs[0]).toBe('rev-parse')
    expect(given.runs).toEqual(own.runs.slice(1))
  })

  const result = (status: string, observed: Record<string, unknown>) => ({
    results: [
      {
        kind: 'exec' as const,
        requirement: 'git',
        status: 'met' as const,
        observed: { toplevel: '/x' },
        durationMs: 1,
      },
      { kind: 'git' as const, requirement: 'history', status: status as 'met', observed, durationMs: 1 },
    ],
  })

  it("takes them from a git requirement's check, met or unmet, HEAD unborn included", () => {
    expect(probedWhere(result('met', { toplevel: '/w', head: 'abc', shallow: false }))).toEqual({
      root: '/w',
      head: 'abc',
    })
    expect(probedWhere(result('unmet', { toplevel: '/w', head: null, shallow: false }))).toEqual({
      root: '/w',
      head: null,
    })
  })

  it('asks git itself after a check in error, outside a worktree, or without a git requirement', () => {
    expect(probedWhere(result('error', { toplevel: '/w', head: 'abc' }))).toBeUndefined()
    expect(probedWhere(result('unmet', { toplevel: null, head: null, shallow: false }))).toBeUndefined()
    expect(probedWhere({ results: result('met', {}).results.slice(0, 1) })).toBeUndefined()
  })
})

// The working state that is HEAD's own (a clone, a setup that wrote only ignored files): status and
// HEAD's tree, no hashing, index or write-tree in git. Anything else takes git's full path, whose tree
// the reference (gitTree) gives.
describe("the baseline of HEAD's own working state", () => {
  async function taken(dir: string) {
    const runs: string[] = []
    const counting: GitRunner = (cwd, args, call) => {
      runs.push(args[0] ?? '')
      return safeGit(cwd, args, call)
    }
    const where = { root: dir, head: git(dir, 'rev-parse', 'HEAD') }
    const base = await captureBaseline(dir, counting, { where })
    return { base, runs, short: runs.join(' ') === 'status rev-parse' }
  }

  it('is HEAD and its tree, from a status and a rev-parse', async () => {
    const dir = await repo({ 'a.txt': 'a\n', 'bin/run': '#!/bin/sh\n', '.gitignore': 'out/\n' })
    await chmod(join(dir, 'bin/run'), 0o755)
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', 'exec')
    await symlink('a.txt', join(dir, 'l'))
    git(dir, 'add', 'l')
    git(dir, 'commit', '-q', '-m', 'link')
    await writeFiles(dir, { 'out/ignored': 'x' })
    const { base, short } = await taken(dir)
    expect(short).toBe(true)
    expect(base).toEqual({ head: git(dir, 'rev-parse', 'HEAD'), tree: git(dir, 'rev-parse', 'HEAD^{tree}') })
    expect(base?.tree).toBe(gitTree(dir))
  })

  it('is the same in a repository of sha256 ids', async () => {
    const dir = await tempDir()
    dirs.push(dir)
    git(dir, 'init', '-q', '--object-format=sha256')
    await writeFiles(dir, { 'a.txt': 'a\n' })
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', 'one')
    const { base, short } = await taken(dir)
    expect(short).toBe(true)
    expect(base?.tree).toBe(git(dir, 'rev-parse', 'HEAD^{tree}'))
  })

  async function replace(at: string, make: (at: string) => Promise<unknown>) {
    await rm(at)
    await make(at)
  }

  // each a working state that differs from HEAD in one way the shortcut must see
  const changes: [string, (dir: string) => Promise<unknown>][] = [
    ['the same size, other bytes', (dir) => writeFile(join(dir, 'a.txt'), 'b\n')],
    ['an executable bit', (dir) => chmod(join(dir, 'a.txt'), 0o755)],
    ['a file gone', (dir) => rm(join(dir, 'a.txt'))],
    ['a file added', (dir) => writeFiles(dir, { 'b.txt': 'b\n' })],
    ['a link retargeted', (dir) => replace(join(dir, 'l'), (at) => symlink('b.txt', at))],
    [
      "a link replaced by a file of the link's text",
      (dir) => replace(join(dir, 'l'), (at) => writeFile(at, 'a.txt')),
    ],
    ['a file replaced by a link', (dir) => replace(join(dir, 'a.txt'), (at) => symlink('l', at))],
    ['a directory in place of a file', (dir) => replace(join(dir, 'a.txt'), (at) => mkdir(at))],
  ]
  it.each(changes)('takes the full path for %s', async (_, change) => {
    const dir = await repo({ 'a.txt': 'a\n' })
    await symlink('a.txt', join(dir, 'l'))
    git(dir, 'add', 'l')
    git(dir, 'commit', '-q', '-m', 'link')
    await change(dir)
    const { base, short } = await taken(dir)
    expect(short).toBe(false)
    expect(base?.tree).toBe(gitTree(dir))
  })

  // .gitignore hides the link itself from status: only the walk from the top sees it
  it('reads nothing through a directory replaced by an ignored link, though the same bytes are there', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    await writeFiles(dir, { 'd/f': 'same\n', '.gitignore': 'd\n' })
    git(dir, 'add', '-f', 'd/f', '.gitignore')
    git(dir, 'commit', '-q', '-m', 'ignored d')
    const outside = `${dir}-outside`
    dirs.push(outside)
    await writeFiles(outside, { f: 'same\n' })
    await rm(join(dir, 'd'), { recursive: true })
    await symlink(outside, join(dir, 'd'))
    const { base, short } = await taken(dir)
    expect(short).toBe(false)
    expect(base?.tree).toBe(gitTree(dir))
  })

  // the worker reads what it hashes itself: never a second link to a file that may be outside
  it('leaves a file with a second link to git', async () => {
    const dir = await repo({ 'a.txt': 'a\n' })
    const outside = `${dir}-outside`
    dirs.push(outside)
    await link(join(dir, 'a.txt'), outside)
    const { base, short } = await taken(dir)
    expect(short).toBe(false)
    expect(base?.tree).toBe(git(dir, 'rev-parse', 'HEAD^{tree}'))
  })

  it('leaves more than 32 MiB of files to git', async () => {
    const big = Buffer.alloc(32 * 1024 * 1024 + 1, 'x')
    const dir = await repo({ 'a.txt': 'a\n' })
    await writeFile(join(dir, 'big'), big)
    git(dir, 'add', 'big')
    git(dir, 'commit', '-q', '-m', 'big')
    expect((await taken(dir)).short).toBe(false)
  })

  it('reads no FIFO, device or link swapped in for the file it saw, and never blocks on one', async () => {
    const dir = await tempDir()
    dirs.push(dir)
    const file = join(dir, 'file')
    await writeFile(file, 'a')
    const seen = await stat(file)
    expect(await readRegular(Buffer.from(file), seen)).toEqual(Buffer.from('a'))
    execFileSync('mkfifo', [join(dir, 'fifo')])
    await symlink(file, join(dir, 'link'))
    for (const name of ['fifo', 'link']) {
      expect(await readRegular(Buffer.from(join(dir, name)), seen)).toBeUndefined()
    }
    await writeFile(join(dir, 'other'), 'a')
    expect(await readRegular(Buffer.from(join(dir, 'other')), seen)).toBeUndefined()
  })
})

describe('captureBaseline on a partial clone', () => {
  it.each(['uploadpack', 'sshCommand'] as const)('runs no promisor remote it names (%s)', async (via) => {
    const scratch = await tempDir()
    dirs.push(scratch)
    const marker = join(scratch, 'fetched')
    const dir = await promisorTrap(via, marker)
    dirs.push(dir)
    await captureBaseline(dir, safeGit).catch(() => undefined)
    expect(existsSync(marker)).toBe(false)
  })
})
