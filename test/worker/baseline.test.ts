import { existsSync } from 'node:fs'
import { chmod, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { captureBaseline } from '../../worker/baseline.js'
import { git, makeRepo, removeAll, safeGit, tempDir, writeFiles } from './git-fixtures.js'

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
