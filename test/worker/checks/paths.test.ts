import { chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkPaths } from '../../../worker/checks/paths.js'
import { context, link, sharedDir, tempDir, write } from './helpers.js'

describe('paths: literal patterns', () => {
  it('is met by an existing file and reads no directory', async () => {
    const ws = tempDir()
    write(ws, 'docs/README.md')
    const ctx = context(ws)
    expect(await checkPaths('docs/README.md', ctx)).toEqual({
      status: 'met',
      observed: { match: 'docs/README.md' },
    })
    expect(ctx.listings.entriesRead).toBe(0)
  })

  it('is unmet with no-match when the file is absent', async () => {
    const finding = await checkPaths('pnpm-lock.yaml', context(tempDir()))
    expect(finding).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [] },
    })
  })

  it('rejects a symlink that escapes the workspace', async () => {
    const ws = tempDir()
    link(ws, 'config.json', write(tempDir(), 'config.json'))
    const finding = await checkPaths('config.json', context(ws))
    expect(finding.status).toBe('unmet')
    expect(finding.observed.rejected).toEqual([{ path: 'config.json', why: 'symlink-escapes-workspace' }])
  })

  it('rejects a path reached through a directory symlink that escapes the workspace', async () => {
    const ws = tempDir()
    const outside = tempDir()
    write(outside, 'README.md')
    link(ws, 'docs', outside)
    const finding = await checkPaths('docs/README.md', context(ws))
    expect(finding.observed.rejected).toEqual([{ path: 'docs/README.md', why: 'symlink-escapes-workspace' }])
  })

  it('rejects a dangling symlink', async () => {
    const ws = tempDir()
    link(ws, 'gone.txt', join(ws, 'nowhere'))
    const finding = await checkPaths('gone.txt', context(ws))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'gone.txt', why: 'dangling-symlink' }] },
    })
  })

  it('accepts a symlink whose target is inside the workspace', async () => {
    const ws = tempDir()
    write(ws, 'real/tsconfig.base.json')
    link(ws, 'tsconfig.json', 'real/tsconfig.base.json')
    expect((await checkPaths('tsconfig.json', context(ws))).status).toBe('met')
  })

  it('requires a directory when the pattern ends with a slash', async () => {
    const ws = tempDir()
    write(ws, 'build')
    expect((await checkPaths('build/', context(ws))).status).toBe('unmet')
    mkdirSync(join(ws, 'dist'))
    expect((await checkPaths('dist/', context(ws))).status).toBe('met')
  })
})

describe('paths: globs', () => {
  it('finds dotfiles and dot-directories', async () => {
    const ws = tempDir()
    write(ws, '.github/workflows/ci.yml')
    expect(await checkPaths('**/ci.yml', context(ws))).toEqual({
      status: 'met',
      observed: { match: '.github/workflows/ci.yml' },
    })
  })

  it('walks only below the static prefix', async () => {
    const ws = tempDir()
    for (let i = 0; i < 50; i++) write(ws, `other/f${i}.ts`)
    write(ws, 'src/lib/a.ts')
    const ctx = context(ws)
    expect((await checkPaths('src/**/*.ts', ctx)).status).toBe('met')
    expect(ctx.listings.entriesRead).toBe(2)
  })

  it('stops at the first match', async () => {
    const ws = tempDir()
    write(ws, 'src/index.ts')
    for (let i = 0; i < 30; i++) write(ws, `src/deep/d${i}/f.ts`)
    const ctx = context(ws)
    expect(await checkPaths('src/**/*.ts', ctx)).toEqual({
      status: 'met',
      observed: { match: 'src/index.ts' },
    })
    expect(ctx.listings.entriesRead).toBe(2)
  })

  it('does not enter directories a segment of the pattern cannot match', async () => {
    const ws = tempDir()
    for (let i = 0; i < 20; i++) write(ws, `packages/p${i}/src/deep/f.ts`)
    const ctx = context(ws)
    expect((await checkPaths('packages/*/tsconfig.json', ctx)).status).toBe('unmet')
    // packages/ (20) and each package (1 entry each): nothing below a package is read
    expect(ctx.listings.entriesRead).toBe(40)
  })

  it('still finds matches when a brace alternative spans a "/"', async () => {
    const ws = tempDir()
    write(ws, 'lib/sub/a.ts')
    expect(await checkPaths('{src,lib/sub}/*.ts', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'lib/sub/a.ts' },
    })
  })

  it('ignores a leading "./"', async () => {
    const ws = tempDir()
    write(ws, 'src/a.ts')
    expect(await checkPaths('./src/*.ts', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'src/a.ts' },
    })
  })

  it('never counts a match that exists only inside .git/', async () => {
    const ws = tempDir()
    write(ws, '.git/refs/heads/main.lock')
    write(ws, 'sub/.git/info/main.lock')
    const finding = await checkPaths('**/*.lock', context(ws))
    expect(finding).toMatchObject({ status: 'unmet', reason: 'no-match' })
  })

  it('never walks a glob whose prefix lies in .git/', async () => {
    const ws = tempDir()
    write(ws, '.git/hooks/pre-commit')
    expect((await checkPaths('.git/hooks/*', context(ws))).status).toBe('unmet')
  })

  it('does not descend into node_modules/ unless the pattern names it', async () => {
    const ws = tempDir()
    write(ws, 'node_modules/left-pad/tsconfig.json')
    write(ws, 'packages/a/node_modules/b/tsconfig.json')
    const ctx = context(ws)
    expect((await checkPaths('**/tsconfig.json', ctx)).status).toBe('unmet')
    expect(ctx.listings.entriesRead).toBe(4)
  })

  it('descends into node_modules/ where the pattern names it literally', async () => {
    const ws = tempDir()
    write(ws, 'packages/a/node_modules/b/tsconfig.json')
    expect(await checkPaths('packages/*/node_modules/*/tsconfig.json', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'packages/a/node_modules/b/tsconfig.json' },
    })
  })

  it('rejects a matching symlink that escapes the workspace and keeps looking', async () => {
    const ws = tempDir()
    link(ws, 'src/escape.ts', write(tempDir(), 'outside.ts'))
    const finding = await checkPaths('src/*.ts', context(ws))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'src/escape.ts', why: 'symlink-escapes-workspace' }] },
    })
    write(ws, 'src/zz/inside.ts')
    expect((await checkPaths('src/**/*.ts', context(ws))).status).toBe('met')
  })

  it('rejects a dangling symlink that matches', async () => {
    const ws = tempDir()
    link(ws, 'gen/api.ts', '../nowhere.ts')
    const finding = await checkPaths('gen/*.ts', context(ws))
    expect(finding.observed.rejected).toEqual([{ path: 'gen/api.ts', why: 'dangling-symlink' }])
  })

  it('rejects a static prefix that is a symlink leaving the workspace', async () => {
    const ws = tempDir()
    const outside = tempDir()
    write(outside, 'a.ts')
    link(ws, 'src', outside)
    const finding = await checkPaths('src/*.ts', context(ws))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'src', why: 'symlink-escapes-workspace' }] },
    })
  })

  it('does not follow directory symlinks below the prefix', async () => {
    const ws = tempDir()
    const outside = tempDir()
    write(outside, 'deep/a.proto')
    link(ws, 'vendor', outside)
    expect((await checkPaths('**/*.proto', context(ws))).status).toBe('unmet')
  })

  it('requires a directory when a glob ends with a slash, also behind a symlink', async () => {
    const ws = tempDir()
    write(ws, 'packages/readme')
    link(ws, 'packages/alias', join(ws, 'packages/readme'))
    expect((await checkPaths('packages/*/', context(ws))).status).toBe('unmet')
    mkdirSync(join(ws, 'packages/web'))
    expect(await checkPaths('packages/*/', context(ws))).toMatchObject({
      status: 'met',
      observed: { match: 'packages/web' },
    })
  })

  it('does not count the static prefix itself as a match', async () => {
    const ws = tempDir()
    mkdirSync(join(ws, 'src/generated'), { recursive: true })
    expect((await checkPaths('src/generated/**', context(ws))).status).toBe('unmet')
    write(ws, 'src/generated/api.ts')
    expect((await checkPaths('src/generated/**', context(ws))).status).toBe('met')
  })

  it('is error walk-limit, never met, when the walk reaches its bound', async () => {
    const ws = tempDir()
    for (let i = 0; i < 10; i++) write(ws, `a/f${i}.txt`)
    write(ws, 'a/b/target.ts')
    const finding = await checkPaths('**/*.ts', context(ws, {}, { maxEntries: 5 }))
    expect(finding).toMatchObject({ status: 'error', reason: 'walk-limit' })
  })

  it('is error timeout, never met, once the check is aborted', async () => {
    const ws = tempDir()
    write(ws, 'src/a.ts')
    const controller = new AbortController()
    controller.abort()
    const finding = await checkPaths('src/**/*.ts', context(ws, {}, { signal: controller.signal }))
    expect(finding).toMatchObject({ status: 'error', reason: 'timeout' })
  })
})

// Another uid than this process's: the directories a test creates are not the agent's.
const AGENT = { uid: 4242, gid: 4242 }

describe('paths as the agent', () => {
  it('is unmet for a file under a 0700 directory of another uid, listing it as unreachable', async () => {
    const ws = sharedDir()
    write(ws, 'secrets/config.json')
    chmodSync(join(ws, 'secrets'), 0o700)
    expect(await checkPaths('secrets/config.json', context(ws, {}, { agent: AGENT }))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [{ path: 'secrets/config.json', why: 'unreachable' }] },
    })
    expect(await checkPaths('secrets/config.json', context(ws))).toMatchObject({ status: 'met' })
  })

  it('is unmet when a directory above the workspace is closed to the agent', async () => {
    const outer = sharedDir()
    const ws = join(outer, 'private/ws')
    write(ws, 'package.json')
    chmodSync(join(outer, 'private'), 0o700)
    expect(await checkPaths('package.json', context(ws, {}, { agent: AGENT }))).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'package.json', why: 'unreachable' }] },
    })
    expect(await checkPaths('*.json', context(ws, {}, { agent: AGENT }))).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'package.json', why: 'unreachable' }] },
    })
  })

  it('rejects a glob match the agent cannot reach and keeps walking to one it can', async () => {
    const ws = sharedDir()
    write(ws, 'closed/a.ts')
    chmodSync(join(ws, 'closed'), 0o700)
    expect(await checkPaths('**/*.ts', context(ws, {}, { agent: AGENT }))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 2, rejected: [{ path: 'closed/a.ts', why: 'unreachable' }] },
    })
    write(ws, 'open/b.ts')
    expect(await checkPaths('**/*.ts', context(ws, {}, { agent: AGENT }))).toEqual({
      status: 'met',
      observed: { match: 'open/b.ts' },
    })
  })

  it('rejects a symlink inside the workspace whose target the agent cannot reach', async () => {
    const ws = sharedDir()
    write(ws, 'vault/real.yml')
    chmodSync(join(ws, 'vault'), 0o700)
    link(ws, 'ci.yml', 'vault/real.yml')
    expect(await checkPaths('ci.yml', context(ws, {}, { agent: AGENT }))).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'ci.yml', why: 'unreachable' }] },
    })
  })
})
