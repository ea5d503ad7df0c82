import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkPaths } from '../../../worker/checks/paths.js'
import { context, link, sharedDir, testDir, write } from '../../support/checks.js'

describe('paths: literal patterns', () => {
  it('is met by an existing file and reads no directory', async () => {
    const ws = testDir()
    write(ws, 'docs/README.md')
    const ctx = context(ws)
    expect(await checkPaths('docs/README.md', ctx)).toEqual({
      status: 'met',
      observed: { match: 'docs/README.md' },
    })
    expect(ctx.listings.entriesRead).toBe(0)
  })

  it('is unmet with no-match when the file is absent', async () => {
    const finding = await checkPaths('pnpm-lock.yaml', context(testDir()))
    expect(finding).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [] },
    })
  })

  it('rejects a symlink that escapes the workspace', async () => {
    const ws = testDir()
    link(ws, 'config.json', write(testDir(), 'config.json'))
    const finding = await checkPaths('config.json', context(ws))
    expect(finding.status).toBe('unmet')
    expect(finding.observed.rejected).toEqual([{ path: 'config.json', why: 'symlink-escapes-workspace' }])
  })

  it('rejects a path reached through a directory symlink that escapes the workspace', async () => {
    const ws = testDir()
    const outside = testDir()
    write(outside, 'README.md')
    link(ws, 'docs', outside)
    const finding = await checkPaths('docs/README.md', context(ws))
    expect(finding.observed.rejected).toEqual([{ path: 'docs/README.md', why: 'symlink-escapes-workspace' }])
  })

  it('rejects a dangling symlink', async () => {
    const ws = testDir()
    link(ws, 'gone.txt', join(ws, 'nowhere'))
    const finding = await checkPaths('gone.txt', context(ws))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'gone.txt', why: 'dangling-symlink' }] },
    })
  })

  it('accepts a symlink whose target is inside the workspace', async () => {
    const ws = testDir()
    write(ws, 'real/tsconfig.base.json')
    link(ws, 'tsconfig.json', 'real/tsconfig.base.json')
    expect((await checkPaths('tsconfig.json', context(ws))).status).toBe('met')
  })

  it('requires a directory when the pattern ends with a slash', async () => {
    const ws = testDir()
    write(ws, 'build')
    expect((await checkPaths('build/', context(ws))).status).toBe('unmet')
    mkdirSync(join(ws, 'dist'))
    expect((await checkPaths('dist/', context(ws))).status).toBe('met')
  })
})

describe('paths: globs', () => {
  it('finds dotfiles and dot-directories', async () => {
    const ws = testDir()
    write(ws, '.github/workflows/ci.yml')
    expect(await checkPaths('**/ci.yml', context(ws))).toEqual({
      status: 'met',
      observed: { match: '.github/workflows/ci.yml' },
    })
  })

  it('walks only below the static prefix', async () => {
    const ws = testDir()
    for (let i = 0; i < 50; i++) write(ws, `other/f${i}.ts`)
    write(ws, 'src/lib/a.ts')
    const ctx = context(ws)
    expect((await checkPaths('src/**/*.ts', ctx)).status).toBe('met')
    expect(ctx.listings.entriesRead).toBe(2)
  })

  it('stops at the first match', async () => {
    const ws = testDir()
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
    const ws = testDir()
    for (let i = 0; i < 20; i++) write(ws, `packages/p${i}/src/deep/f.ts`)
    const ctx = context(ws)
    expect((await checkPaths('packages/*/tsconfig.json', ctx)).status).toBe('unmet')
    // packages/ (20) and each package (1 entry each): nothing below a package is read
    expect(ctx.listings.entriesRead).toBe(40)
  })

  it('does not enter a directory whose name a segment of the pattern cannot match', async () => {
    const ws = testDir()
    write(ws, 'abc/x.ts')
    write(ws, 'zzz/x.ts')
    const ctx = context(ws)
    expect((await checkPaths('a*/nothing.ts', ctx)).status).toBe('unmet')
    // the workspace (2) and abc/ (1): zzz/ is not read
    expect(ctx.listings.entriesRead).toBe(3)
  })

  it('still finds matches when a brace alternative spans a "/"', async () => {
    const ws = testDir()
    write(ws, 'lib/sub/a.ts')
    expect(await checkPaths('{src,lib/sub}/*.ts', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'lib/sub/a.ts' },
    })
  })

  it('ignores a leading "./"', async () => {
    const ws = testDir()
    write(ws, 'src/a.ts')
    expect(await checkPaths('./src/*.ts', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'src/a.ts' },
    })
  })

  it('never counts a match that exists only inside .git/', async () => {
    const ws = testDir()
    write(ws, '.git/refs/heads/main.lock')
    write(ws, 'sub/.git/info/main.lock')
    const finding = await checkPaths('**/*.lock', context(ws))
    expect(finding).toMatchObject({ status: 'unmet', reason: 'no-match' })
  })

  it('never walks a glob whose prefix lies in .git/', async () => {
    const ws = testDir()
    write(ws, '.git/hooks/pre-commit')
    expect((await checkPaths('.git/hooks/*', context(ws))).status).toBe('unmet')
  })

  it('does not descend into node_modules/ unless the pattern names it', async () => {
    const ws = testDir()
    write(ws, 'node_modules/left-pad/tsconfig.json')
    write(ws, 'packages/a/node_modules/b/tsconfig.json')
    const ctx = context(ws)
    expect((await checkPaths('**/tsconfig.json', ctx)).status).toBe('unmet')
    expect(ctx.listings.entriesRead).toBe(4)
  })

  it('descends into node_modules/ where the pattern names it literally', async () => {
    const ws = testDir()
    write(ws, 'packages/a/node_modules/b/tsconfig.json')
    expect(await checkPaths('packages/*/node_modules/*/tsconfig.json', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'packages/a/node_modules/b/tsconfig.json' },
    })
  })

  it('rejects a matching symlink that escapes the workspace and keeps looking', async () => {
    const ws = testDir()
    link(ws, 'src/escape.ts', write(testDir(), 'outside.ts'))
    const finding = await checkPaths('src/*.ts', context(ws))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'src/escape.ts', why: 'symlink-escapes-workspace' }] },
    })
    write(ws, 'src/zz/inside.ts')
    expect((await checkPaths('src/**/*.ts', context(ws))).status).toBe('met')
  })

  it('rejects a dangling symlink that matches', async () => {
    const ws = testDir()
    link(ws, 'gen/api.ts', '../nowhere.ts')
    const finding = await checkPaths('gen/*.ts', context(ws))
    expect(finding.observed.rejected).toEqual([{ path: 'gen/api.ts', why: 'dangling-symlink' }])
  })

  it('rejects a static prefix that is a symlink leaving the workspace', async () => {
    const ws = testDir()
    const outside = testDir()
    write(outside, 'a.ts')
    link(ws, 'src', outside)
    const finding = await checkPaths('src/*.ts', context(ws))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'src', why: 'symlink-escapes-workspace' }] },
    })
  })

  it('does not enter a symlinked directory that leaves the workspace', async () => {
    const ws = testDir()
    const outside = testDir()
    write(outside, 'deep/a.proto')
    link(ws, 'vendor', outside)
    expect((await checkPaths('**/*.proto', context(ws))).status).toBe('unmet')
  })

  it('requires a directory when a glob ends with a slash, also behind a symlink', async () => {
    const ws = testDir()
    write(ws, 'packages/readme')
    link(ws, 'packages/alias', join(ws, 'packages/readme'))
    expect((await checkPaths('packages/*/', context(ws))).status).toBe('unmet')
    mkdirSync(join(ws, 'packages/web'))
    expect(await checkPaths('packages/*/', context(ws))).toMatchObject({
      status: 'met',
      observed: { match: 'packages/web' },
    })
  })

  it('needs something inside dir for dir/**: the directory itself is not a match', async () => {
    const ws = testDir()
    mkdirSync(join(ws, 'src/generated'), { recursive: true })
    expect((await checkPaths('src/generated/**', context(ws))).status).toBe('unmet')
    write(ws, 'src/generated/api.ts')
    expect((await checkPaths('src/generated/**', context(ws))).status).toBe('met')
  })

  // picomatch alone accepts `empty-dir` for `empty-dir/**`, `@(empty-dir)/**` and `{empty-dir,nope}/**`
  // (not for `*/**`): every spelling reads a last `**` as one segment or more.
  it.each([
    'empty-dir/**',
    '@(empty-dir)/**',
    '{empty-dir,nope}/**',
    'empty-di[r]/**',
    '*/**',
    'empty-dir/**/',
    'empty-dir/**/**',
  ])('reads %s as needing an entry inside the directory', async (pattern) => {
    const ws = testDir()
    mkdirSync(join(ws, 'empty-dir'))
    expect(await checkPaths(pattern, context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: expect.any(Number), rejected: [] },
    })
    mkdirSync(join(ws, 'empty-dir/sub'))
    expect(await checkPaths(pattern, context(ws))).toEqual({
      status: 'met',
      observed: { match: 'empty-dir/sub' },
    })
  })

  it('is error walk-limit, never met, when the walk reaches its bound', async () => {
    const ws = testDir()
    for (let i = 0; i < 10; i++) write(ws, `a/f${i}.txt`)
    write(ws, 'a/b/target.ts')
    const finding = await checkPaths('**/*.ts', context(ws, {}, { maxEntries: 5 }))
    expect(finding).toEqual({ status: 'error', reason: 'walk-limit', observed: { entriesScanned: 12 } })
  })

  it('is error timeout, never met, once the check is aborted', async () => {
    const ws = testDir()
    write(ws, 'src/a.ts')
    const controller = new AbortController()
    controller.abort()
    const finding = await checkPaths('src/**/*.ts', context(ws, {}, { signal: controller.signal }))
    expect(finding).toMatchObject({ status: 'error', reason: 'timeout' })
  })
})

describe('paths: the grammar, as picomatch reads it', () => {
  // picomatch's matcher accepts the pattern's own string even where its regular expression reads a group
  it.each(['docs/a(b).txt', 'docs/@(x).md', 'docs/+(y).md', 'docs/!(z).md', 'docs/c(d)+(e)@!.txt'])(
    'is met by the file named %s, required by its plain name',
    async (name) => {
      const ws = testDir()
      write(ws, name)
      expect(await checkPaths(name, context(ws))).toEqual({ status: 'met', observed: { match: name } })
    },
  )

  it('reads [!k] as "any character but k", as [^k]', async () => {
    const ws = testDir()
    write(ws, 'pkg181')
    expect((await checkPaths('p[!k]g181', context(ws))).status).toBe('unmet')
    expect((await checkPaths('p[^k]g181', context(ws))).status).toBe('unmet')
    write(ws, 'p!g181')
    expect(await checkPaths('p[!k]g181', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'p!g181' },
    })
  })

  it('knows POSIX character classes', async () => {
    const ws = testDir()
    write(ws, 'v1.txt')
    expect((await checkPaths('v[[:alpha:]].txt', context(ws))).status).toBe('unmet')
    expect((await checkPaths('v[[:digit:]].txt', context(ws))).status).toBe('met')
  })

  it.each(['src//index.ts', 'src/./index.ts', '././src/index.ts', 'src/*.ts//', './'])(
    'refuses %j, which is not in normal form, instead of matching it',
    async (pattern) => {
      const ws = testDir()
      write(ws, 'src/index.ts')
      await expect(checkPaths(pattern, context(ws))).rejects.toThrow(/normal form/)
    },
  )
})

describe('paths: patterns a segment cannot be matched on its own', () => {
  // each: a group, a "|", a quote or a class that spans a "/" or can match one, or a "$" (picomatch reads
  // "$$*" alone differently): the walk must not prune by segment, or it misses the match
  it.each([
    ['@(src/lib)/*.ts', 'src/lib/a.ts'],
    ['a/b|c/d', 'c/d'],
    ['"a/b"/*', 'a/b/x'],
    ['$$*/x', '$$/x'],
    ['a[b/c]d', 'a/d'],
    ['{a,b/c}/x', 'b/c/x'],
    // classes picomatch compiles to ones that match "/", though none is written in them
    ['a[[:punct:]]b', 'a/b'],
    ['src[[:ascii:]]x/*.ts', 'src/x/a.ts'],
    ['a[.-0]b/c', 'a/b/c'],
    ['a{+..0}b', 'a/b'],
    ['x/a[^[:alpha:]]b', 'x/a/b'],
    // picomatch rebuilds these, a "." then any character
    ['a.b/[[:digit:]]', 'a/b/1'],
    ['src/x.*/[[:alpha:]]', 'src/xy/a'],
    // not a segment the pattern cannot match, but one below its globstar: anything may hold a match there
    ['packages/*/**/x.ts', 'packages/a/b/c/x.ts'],
  ])('%s is met by %s', async (pattern, file) => {
    const ws = testDir()
    write(ws, file)
    expect(await checkPaths(pattern, context(ws))).toEqual({ status: 'met', observed: { match: file } })
  })
})

describe('paths: symlinked directories', () => {
  it('follows a symlinked directory inside the workspace below the static prefix as at it', async () => {
    const ws = testDir()
    write(ws, 'real/a.ts')
    link(ws, 'link', 'real')
    expect(await checkPaths('link/*', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'link/a.ts' },
    })
    expect(await checkPaths('**/link/*', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'link/a.ts' },
    })
    expect(await checkPaths('*/link/*', context(ws))).toMatchObject({ status: 'unmet' })
  })

  it('never reaches .git through a symlink, at the prefix or below it', async () => {
    const ws = testDir()
    write(ws, '.git/HEAD')
    write(ws, '.git/refs/heads/main')
    link(ws, 'gitlink', '.git')
    link(ws, 'sub/refs', '../.git/refs')
    for (const pattern of ['gitlink/HEA?', 'gitlink/refs/**', '**/HEAD', '**/main', 'git*', 'sub/*'])
      expect(await checkPaths(pattern, context(ws)), pattern).toMatchObject({ status: 'unmet' })
    // a literal names one path: no walk, no walk rules
    expect(await checkPaths('gitlink/HEAD', context(ws))).toMatchObject({ status: 'met' })
  })

  it('reaches node_modules through a symlink only when the pattern names node_modules', async () => {
    const ws = testDir()
    write(ws, 'node_modules/left-pad/package.json')
    link(ws, 'nmlink', 'node_modules')
    link(ws, 'vendor/left-pad', '../node_modules/left-pad')
    for (const pattern of ['nmlink/*/package.json', 'vendor/*/package.json', '**/package.json', 'nm*'])
      expect(await checkPaths(pattern, context(ws)), pattern).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('node_modules/*/package.json', context(ws))).toMatchObject({ status: 'met' })
  })

  it('finds a package that pnpm links into node_modules', async () => {
    const ws = testDir()
    write(ws, 'node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/package.json')
    link(ws, 'node_modules/left-pad', '.pnpm/left-pad@1.3.0/node_modules/left-pad')
    expect(await checkPaths('node_modules/*/package.json', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'node_modules/left-pad/package.json' },
    })
  })

  it('sees a symlink to a directory on its own path but does not enter it again', async () => {
    const ws = testDir()
    write(ws, 'a/b.txt')
    link(ws, 'a/up', '..')
    link(ws, 'a/self', '.')
    const ctx = context(ws)
    expect(await checkPaths('**/nothing', ctx)).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 4, rejected: [] },
    })
    expect(await checkPaths('**/up', ctx)).toEqual({ status: 'met', observed: { match: 'a/up' } })
    expect(await checkPaths('a/up/a/*.txt', ctx)).toMatchObject({ status: 'unmet' })
  })

  // found by the differential test: picomatch accepts `a b` for `a b/**/{**,a}` (and `f` for `f/**/@(*)`),
  // whose globstar may stand for nothing before a segment that may match nothing
  it('counts the static prefix as a match when the pattern matches it, though it cannot be entered', async () => {
    const ws = testDir()
    link(ws, 'a b', '.')
    write(ws, 'f')
    expect(await checkPaths('a b/**/{**,a}', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'a b' },
    })
    expect(await checkPaths('f/**/@(*)', context(ws))).toEqual({ status: 'met', observed: { match: 'f' } })
    expect(await checkPaths('f/**/@(*)/', context(ws))).toMatchObject({ status: 'unmet' })
  })

  it('does not enter a directory of the static prefix again through a link below it', async () => {
    const ws = testDir()
    write(ws, 'a/x')
    link(ws, 'a/b/up', '..')
    expect(await checkPaths('a/b/*/x', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('a/b/*', context(ws))).toEqual({ status: 'met', observed: { match: 'a/b/up' } })
  })

  // setup is untrusted: 2 links per level, 30 levels, 2^30 paths without a loop among them
  it('ends a walk through a link bomb at its bound, as error walk-limit', async () => {
    const ws = testDir()
    for (let level = 0; level < 30; level++) {
      mkdirSync(join(ws, `d${level}`))
      link(ws, `d${level}/a`, `../d${level + 1}`)
      link(ws, `d${level}/b`, `../d${level + 1}`)
    }
    mkdirSync(join(ws, 'd30'))
    const finding = await checkPaths('d0/**/nothing', context(ws, {}, { maxEntries: 5_000 }))
    expect(finding).toMatchObject({ status: 'error', reason: 'walk-limit' })
  })

  it('does not loop between two directories that link to each other', async () => {
    const ws = testDir()
    link(ws, 'a/to-b', '../b')
    link(ws, 'b/to-a', '../a')
    write(ws, 'b/x.txt')
    expect(await checkPaths('**/nothing', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('a/*/x.txt', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'a/to-b/x.txt' },
    })
    // a/to-b/to-a is b/to-a/.. seen from a: the real directory a, already on its own path
    expect(await checkPaths('a/to-b/to-a/*', context(ws))).toMatchObject({ status: 'unmet' })
  })
})

// A directory this process may not list: readdir answers EACCES, which is not "missing" — the match may be
// inside it. Root is never refused while it holds CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so as root the
// check runs in a child without them (setpriv, the TypeScript source through tsx), still as root and so able
// to read it.
describe('paths: a directory it cannot read', () => {
  it('is error, never unmet, when a glob must read a directory it cannot', () => {
    const ws = testDir()
    write(ws, 'locked/inner/a.ts')
    write(ws, 'open/readme.md')
    chmodSync(join(ws, 'locked'), 0o000)
    try {
      expect(verifyUnprivileged(ws, ['**/*.ts', 'open/*.ts'])).toEqual([
        expect.objectContaining({ status: 'error', reason: 'check-failed' }),
        expect.objectContaining({ status: 'unmet', reason: 'no-match' }),
      ])
    } finally {
      chmodSync(join(ws, 'locked'), 0o755)
    }
  })
})

function verifyUnprivileged(workspace: string, paths: string[]): unknown {
  const module = new URL('../../../worker/checks/index.ts', import.meta.url).href
  const script = `const { verify } = await import(${JSON.stringify(module)})
const verdict = await verify({ paths: ${JSON.stringify(paths)} }, { workspace: ${JSON.stringify(workspace)}, env: {} })
process.stdout.write(JSON.stringify(verdict.results))`
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]
  const argv =
    process.getuid?.() === 0 ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', ...node] : node
  return JSON.parse(execFileSync(argv[0] as string, argv.slice(1), { encoding: 'utf8' }))
}

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

describe('paths: what the walk rules hold for the static prefix', () => {
  it('never counts the workspace itself, though a pattern matches the empty path', async () => {
    const ws = testDir()
    expect(await checkPaths('{,a}', context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [] },
    })
  })

  it('reads "\\" in a name as a character, never as a separator', async () => {
    const ws = testDir()
    write(ws, 'x\\y.ts')
    expect(await checkPaths('*/*', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('*', context(ws))).toEqual({ status: 'met', observed: { match: 'x\\y.ts' } })
  })

  it('walks from the workspace when a "|" may split the whole pattern', async () => {
    const ws = testDir()
    write(ws, 'c')
    expect(await checkPaths('a/b|c', context(ws))).toEqual({ status: 'met', observed: { match: 'c' } })
  })

  it('never walks a prefix named .git, even where .git is a symlink to a directory of another name', async () => {
    const ws = testDir()
    write(ws, 'gitdir/HEAD')
    link(ws, '.git', 'gitdir')
    expect(await checkPaths('.git/HEA?', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('gitdir/HEA?', context(ws))).toMatchObject({ status: 'met' })
  })

  it('does not walk a static prefix that is a directory already on its own path', async () => {
    const ws = testDir()
    write(ws, 'top.txt')
    link(ws, 'a/up', '..')
    expect(await checkPaths('a/up/*.txt', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('*.txt', context(ws))).toMatchObject({ status: 'met' })
  })

  it('lists a static prefix that is a dangling symlink, and nothing for one that is not there', async () => {
    const ws = testDir()
    link(ws, 'gen', 'nowhere')
    expect(await checkPaths('gen/*.ts', context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [{ path: 'gen', why: 'dangling-symlink' }] },
    })
    expect(await checkPaths('missing/*.ts', context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [] },
    })
  })

  it('does not enter a directory on the way to the prefix that is already on its own path', async () => {
    const ws = testDir()
    write(ws, 'x/f.txt')
    link(ws, 'a/up', '..')
    expect(await checkPaths('a/up/x/*.txt', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('x/*.txt', context(ws))).toMatchObject({ status: 'met' })
  })

  it('decides a prefix that is a file without a walk, even out of time', async () => {
    const ws = testDir()
    write(ws, 'f')
    const controller = new AbortController()
    controller.abort()
    expect(await checkPaths('f/*', context(ws, {}, { signal: controller.signal }))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [] },
    })
  })

  it('is unmet for a literal path through a file: nothing is there', async () => {
    const ws = testDir()
    write(ws, 'file.txt')
    expect(await checkPaths('file.txt/x', context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [] },
    })
  })

  // one verify() judges every pattern against one workspace: a workspace link swapped meanwhile changes nothing
  it('reads the real path of the workspace once per verify() call', async () => {
    const parent = testDir()
    write(parent, 'one/x')
    write(parent, 'two/x')
    const ws = join(parent, 'ws')
    link(parent, 'ws', 'one')
    const ctx = context(ws)
    expect(await checkPaths('x', ctx)).toMatchObject({ status: 'met' })
    rmSync(ws)
    link(parent, 'ws', 'two')
    expect(await checkPaths('x', ctx)).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'x', why: 'symlink-escapes-workspace' }] },
    })
    expect(await checkPaths('x', context(ws))).toMatchObject({ status: 'met' })
  })
})

describe('paths as the agent: the static prefix', () => {
  it('rejects a prefix that matches but that the agent cannot reach', async () => {
    const ws = sharedDir()
    write(ws, 'f')
    chmodSync(ws, 0o700)
    expect(await checkPaths('f/**/@(*)', context(ws, {}, { agent: AGENT }))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 0, rejected: [{ path: 'f', why: 'unreachable' }] },
    })
    expect(await checkPaths('f/**/@(*)', context(ws))).toEqual({ status: 'met', observed: { match: 'f' } })
  })

  it('lists at most 20 rejected entries, the prefix among them', async () => {
    const ws = sharedDir()
    for (let i = 0; i < 25; i++) write(ws, `closed/dir/f${i}`)
    chmodSync(join(ws, 'closed'), 0o700)
    const finding = await checkPaths('closed/dir/**/{**,a}', context(ws, {}, { agent: AGENT }))
    expect(finding).toMatchObject({ status: 'unmet', reason: 'no-match' })
    const rejected = finding.observed.rejected as { path: string; why: string }[]
    expect(rejected).toHaveLength(20)
    expect(rejected[0]).toEqual({ path: 'closed/dir', why: 'unreachable' })
  })

  it('does not enter a directory at the last segment of a pattern without a globstar', async () => {
    const ws = sharedDir()
    for (let i = 0; i < 5; i++) write(ws, `packages/a/package.json/f${i}`)
    chmodSync(join(ws, 'packages/a/package.json'), 0o700)
    chmodSync(join(ws, 'packages/a'), 0o700)
    expect(await checkPaths('packages/*/package.json', context(ws, {}, { agent: AGENT }))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 2, rejected: [{ path: 'packages/a/package.json', why: 'unreachable' }] },
    })
  })
})
