// paths where the kernel answers a fault (EIO) or a refusal (EACCES): a FUSE file system that fails every
// request, bind-mounted inside the workspace. Only "not there" (ENOENT, ENOTDIR, ELOOP) is a miss; any
// other answer may hide the match, so the check throws and the evaluator reports `error`, never `unmet`.
import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DirectoryCache } from '../../../worker/checks/listing.js'
import { checkPaths } from '../../../worker/checks/paths.js'
import { Turns } from '../../../worker/checks/turns.js'
import { context, link, testDir, write } from '../../support/checks.js'
import { failingMount } from '../../support/failing-mount.js'

const bound: string[] = []

// registered after the temp directories' cleanup, so it runs before it (after-hooks run in reverse)
afterEach(() => {
  for (const dir of bound.splice(0).reverse()) execFileSync('umount', [dir], { stdio: 'ignore' })
})

// `name` inside the workspace, a directory the kernel fails every lookup in with `code`; undefined where
// this machine cannot mount FUSE (not root, no /dev/fuse).
async function failingDir(ws: string, name: string, code: 'EIO' | 'EACCES'): Promise<string | undefined> {
  const mount = await failingMount(code)
  if (!mount) return undefined
  const dir = join(ws, name)
  mkdirSync(dir, { recursive: true })
  execFileSync('mount', ['--bind', mount, dir])
  bound.push(dir)
  return dir
}

describe.each(['EIO', 'EACCES'] as const)('paths where the kernel answers %s', (code) => {
  it('throws for a directory a glob must list', async (t) => {
    const ws = testDir()
    write(ws, 'src/readme.md')
    if (!(await failingDir(ws, 'src/locked', code))) return t.skip()
    await expect(checkPaths('src/**/*.ts', context(ws))).rejects.toThrow(code)
  })

  it('throws for a symlink a glob must follow', async (t) => {
    const ws = testDir()
    const dir = await failingDir(ws, 'mnt', code)
    if (!dir) return t.skip()
    link(ws, 'src/a.ts', join(dir, 'a.ts'))
    await expect(checkPaths('src/*.ts', context(ws))).rejects.toThrow(code)
  })

  it('throws for a static prefix it cannot resolve', async (t) => {
    const ws = testDir()
    const dir = await failingDir(ws, 'mnt', code)
    if (!dir) return t.skip()
    link(ws, 'src', join(dir, 'src'))
    await expect(checkPaths('src/*.ts', context(ws))).rejects.toThrow(code)
  })

  it('throws for a literal path it cannot look at', async (t) => {
    const ws = testDir()
    if (!(await failingDir(ws, 'mnt', code))) return t.skip()
    await expect(checkPaths('mnt/package.json', context(ws))).rejects.toThrow(code)
  })

  it('throws for a literal path whose symlink it cannot follow', async (t) => {
    const ws = testDir()
    const dir = await failingDir(ws, 'mnt', code)
    if (!dir) return t.skip()
    link(ws, 'package.json', join(dir, 'package.json'))
    await expect(checkPaths('package.json', context(ws))).rejects.toThrow(code)
  })

  it('does not look at a symlink that neither matches nor may hold a match', async (t) => {
    const ws = testDir()
    const dir = await failingDir(ws, 'mnt', code)
    if (!dir) return t.skip()
    link(ws, 'src/docs.md', join(dir, 'docs.md'))
    expect(await checkPaths('src/*.ts', context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 1, rejected: [] },
    })
  })

  it('throws, rather than answer "not there", from the listing', async (t) => {
    const ws = testDir()
    const dir = await failingDir(ws, 'mnt', code)
    if (!dir) return t.skip()
    expect(() => new DirectoryCache().list(dir, new Turns(new AbortController().signal))).toThrow(code)
  })
})
