// `paths` on the shapes real repositories have: scoped packages, .bin links, nested node_modules, a test
// fixture's node_modules committed to the repository, pnpm's symlinked store, workspace packages linked into
// each other, a submodule's and a worktree's `.git` file. A table of patterns with expected verdicts, and
// every verdict also held to the oracle of the differential test.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPaths } from '../../../worker/checks/paths.js'
import { context } from '../../support/checks.js'
import { oracle } from '../../support/paths-oracle.js'

const FILES = [
  'package.json',
  'pnpm-workspace.yaml',
  'src/index.ts',
  'docs/README.md',
  '.github/workflows/ci.yml',
  'configs/tsconfig.base.json',
  '.git/HEAD',
  '.git/refs/heads/main',
  '.git/objects/ab/cdef0123',
  '.git/modules/lib/HEAD',
  // npm: scoped and nested packages, binaries
  'node_modules/@scope/pkg/package.json',
  'node_modules/@scope/pkg/dist/index.js',
  'node_modules/typescript/package.json',
  'node_modules/typescript/bin/tsc',
  'node_modules/a/package.json',
  'node_modules/a/node_modules/b/package.json',
  // pnpm's store: real packages under .pnpm, linked into node_modules
  'node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/package.json',
  'node_modules/.pnpm/dep@2.0.0/node_modules/dep/package.json',
  'node_modules/.pnpm/dep@2.0.0/node_modules/dep/lib/index.js',
  // a fixture project committed with its own node_modules
  'test/fixtures/project/package.json',
  'test/fixtures/project/node_modules/dep/index.js',
  // workspace packages
  'packages/web/package.json',
  'packages/web/src/app.tsx',
  'packages/api/package.json',
  // a submodule and a worktree, each with a `.git` file
  'vendor/lib/src/x.c',
  'worktrees/feature/README.md',
]

const DIRS = ['src/generated']

const LINKS: [string, string][] = [
  ['tsconfig.json', 'configs/tsconfig.base.json'],
  ['node_modules/.bin/tsc', '../typescript/bin/tsc'],
  ['node_modules/left-pad', '.pnpm/left-pad@1.3.0/node_modules/left-pad'],
  ['node_modules/.pnpm/left-pad@1.3.0/node_modules/dep', '../../dep@2.0.0/node_modules/dep'],
  ['node_modules/.pnpm/node_modules/dep', '../dep@2.0.0/node_modules/dep'],
  ['node_modules/@org/web', '../../packages/web'],
  ['node_modules/@org/api', '../../packages/api'],
  // workspace packages that depend on each other: a cycle through node_modules
  ['packages/web/node_modules/@org/api', '../../../api'],
  ['packages/api/node_modules/@org/web', '../../../web'],
]

const GIT_FILES: [string, string][] = [
  ['vendor/lib/.git', 'gitdir: ../../.git/modules/lib\n'],
  ['worktrees/feature/.git', 'gitdir: /elsewhere/.git/worktrees/feature\n'],
]

// pattern, expected status, expected match when met (undefined: any the oracle accepts)
const TABLE: [string, 'met' | 'unmet', string?][] = [
  ['package.json', 'met', 'package.json'],
  ['src/**/*.ts', 'met', 'src/index.ts'],
  ['src/generated/**', 'unmet'],
  ['src/generated/', 'met', 'src/generated'],
  ['**/ci.yml', 'met', '.github/workflows/ci.yml'],
  ['tsconfig.json', 'met', 'tsconfig.json'],
  ['*.json', 'met'],
  // .git: never walked, whether a directory or a submodule's or worktree's file; a literal may name it
  ['**/HEAD', 'unmet'],
  ['**/.git', 'unmet'],
  ['vendor/*/.git', 'unmet'],
  ['.git/HEAD', 'met', '.git/HEAD'],
  ['vendor/**/*.c', 'met', 'vendor/lib/src/x.c'],
  ['worktrees/*/README.md', 'met', 'worktrees/feature/README.md'],
  // node_modules: only where the pattern names it, then nested ones too
  ['**/*.js', 'unmet'],
  ['test/**/index.js', 'unmet'],
  ['**/node_modules/**/*.js', 'met'],
  ['test/fixtures/*/node_modules/*/index.js', 'met', 'test/fixtures/project/node_modules/dep/index.js'],
  ['node_modules/@scope/*/package.json', 'met', 'node_modules/@scope/pkg/package.json'],
  ['node_modules/*/node_modules/*/package.json', 'met'],
  ['node_modules/.bin/tsc', 'met', 'node_modules/.bin/tsc'],
  ['node_modules/.bin/ts?', 'met', 'node_modules/.bin/tsc'],
  // pnpm: packages are symlinked directories
  ['node_modules/left-pad/package.json', 'met', 'node_modules/left-pad/package.json'],
  ['node_modules/left-*/package.json', 'met', 'node_modules/left-pad/package.json'],
  ['node_modules/.pnpm/*/node_modules/*/package.json', 'met'],
  ['node_modules/.pnpm/left-pad@*/node_modules/dep/lib/*.js', 'met'],
  ['**/.pnpm/**', 'unmet'],
  // workspace links, and the cycle between two packages cut where a directory repeats on its own path
  ['node_modules/@org/*/src/*.tsx', 'met', 'node_modules/@org/web/src/app.tsx'],
  ['packages/*/node_modules/@org/*/package.json', 'met'],
  ['node_modules/@org/web/node_modules/@org/api/package.json', 'met'],
  ['node_modules/@org/*/node_modules/@org/*/node_modules/@org/*/package.json', 'unmet'],
  ['packages/web/node_modules/@org/api/node_modules/@org/web/package.json', 'met'],
  ['packages/web/node_modules/@org/*/node_modules/@org/web/package.json', 'unmet'],
]

let root: string
let workspace: string

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'preflight-real-trees-')))
  workspace = join(root, 'repo')
  for (const file of FILES) put(file, 'x\n')
  for (const [file, text] of GIT_FILES) put(file, text)
  for (const dir of DIRS) mkdirSync(join(workspace, dir), { recursive: true })
  for (const [path, target] of LINKS) {
    mkdirSync(dirname(join(workspace, path)), { recursive: true })
    symlinkSync(target, join(workspace, path))
  }
})

afterAll(() => rmSync(root, { recursive: true, force: true }))

function put(rel: string, text: string): void {
  mkdirSync(dirname(join(workspace, rel)), { recursive: true })
  writeFileSync(join(workspace, rel), text)
}

describe('paths on the shapes of real repositories', () => {
  it.each(TABLE)('%s is %s', async (pattern, status, match) => {
    const found = await checkPaths(pattern, context(workspace))
    const expected = oracle(workspace, pattern)
    expect(found.status).toBe(status)
    expect(expected.matches.size > 0 ? 'met' : 'unmet').toBe(status)
    if (status === 'met') {
      expect(expected.matches).toContain(found.observed.match)
      if (match) expect(found.observed.match).toBe(match)
    }
  })
})
