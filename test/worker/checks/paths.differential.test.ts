// checkPaths against an oracle written from docs/requirements.md on top of picomatch's isMatch, over
// generated trees (names that are not UTF-8 among them) and patterns (fast-check; a failure is shrunk to a
// small tree and pattern); a pattern the contract refuses must be refused by the check. In `npm test` a
// fixed seed and a few hundred runs; `npm run test:fuzz` raises PREFLIGHT_FUZZ_RUNS (and takes
// PREFLIGHT_FUZZ_SEED), and prints how many cases ran.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PathPattern } from '../../../src/contract/index.js'
import type { Finding } from '../../../worker/checks/index.js'
import { checkPaths } from '../../../worker/checks/paths.js'
import { context } from '../../support/checks.js'
import { oracle, type WalkMemo } from '../../support/paths-oracle.js'
import { type PatternSpec, patternOf, patternSpec, rewrite } from '../../support/paths-patterns.js'
import { buildTree, NAMES, pathsThrough, type Tree, tree } from '../../support/paths-trees.js'

const RUNS = Number(process.env.PREFLIGHT_FUZZ_RUNS ?? 300)
const SEED = Number(process.env.PREFLIGHT_FUZZ_SEED ?? 16)

let scratch: string
let fifo: string

beforeAll(() => {
  // PREFLIGHT_FUZZ_DIR=/dev/shm (a tmpfs) makes the many small trees of a long run cheaper to write
  const under = process.env.PREFLIGHT_FUZZ_DIR ?? tmpdir()
  scratch = realpathSync(mkdtempSync(join(under, 'preflight-differential-')))
  fifo = join(scratch, 'fifo')
  execFileSync('mkfifo', [fifo])
})

afterAll(() => rmSync(scratch, { recursive: true, force: true }))

// What the check and the oracle disagree on for one pattern, or undefined.
function disagreement(
  workspace: string,
  pattern: string,
  found: Finding,
  memo: WalkMemo,
): string | undefined {
  const expected = oracle(workspace, pattern, memo)
  const status = expected.matches.size > 0 ? 'met' : 'unmet'
  if (found.status !== status) return `${found.status}, oracle ${status}`
  // a report shows each byte of a name that is not UTF-8 as U+FFFD
  if (status === 'met') {
    const match = found.observed.match as string
    return [...expected.matches].some((m) => shown(m) === match)
      ? undefined
      : `match ${match} is none of the oracle's`
  }
  const listed = found.observed.rejected as { path: string; why: string }[]
  const rejected = [...expected.rejected].map(([path, why]) => [shown(path), why] as const)
  // every matching entry that does not count is listed (up to 20); anything else listed is the static prefix
  const base = staticPrefix(pattern.replace(/^\.\//, ''))
  for (const { path, why } of listed) {
    const known = rejected.some(([p, w]) => p === path && w === why) || `${base}/`.startsWith(`${path}/`)
    if (!known) return `rejected ${path} (${why}) that the oracle does not`
  }
  if (listed.length < 20) {
    for (const [path, why] of rejected)
      if (!listed.some((r) => r.path === path && r.why === why)) return `did not list ${path} (${why})`
  }
  return undefined
}

describe('paths, differentially against picomatch', () => {
  it(
    `agrees with the documented rules on ${RUNS} generated trees (seed ${SEED})`,
    async () => {
      let trees = 0
      let patterns = 0
      let refused = 0
      await fc.assert(
        fc.asyncProperty(tree, fc.array(patternSpec, { minLength: 1, maxLength: 5 }), async (t, specs) => {
          const root = mkdtempSync(join(scratch, 'case-'))
          try {
            const workspace = buildTree(root, t, fifo)
            const ctx = context(workspace, {}, { maxEntries: 1_000_000, timeoutMs: 60_000 })
            const memo: WalkMemo = new Map()
            trees++
            for (const pattern of patternsOf(specs, t, pathsThrough(workspace))) {
              if (!PathPattern.safeParse(pattern).success) {
                refused++
                await expect(checkPaths(pattern, ctx), pattern).rejects.toThrow(/invalid path pattern/)
                continue
              }
              patterns++
              const found = await checkPaths(pattern, ctx)
              const problem = disagreement(workspace, pattern, found, memo)
              if (problem)
                throw new Error(`${JSON.stringify(pattern)}: ${problem}; check said ${JSON.stringify(found)}`)
            }
          } finally {
            rmSync(root, { recursive: true, force: true })
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: false },
      )
      console.log(
        `paths differential: ${trees} trees, ${patterns} patterns compared, ${refused} refused by both ` +
          `(seed ${SEED}), no disagreement`,
      )
      expect(trees).toBeGreaterThanOrEqual(RUNS)
    },
    // ~40 ms a tree on a quiet machine; 100 s for 300 leaves room for a loaded one (seen: >30 s at load 13)
    Math.max(100_000, RUNS * 300),
  )
})

// Names a segment can be written in with `@(…)` and `{…,…}` around it; not node_modules, which only a
// segment that is literally `node_modules` names (documented: `{node_modules,x}/**` sees none).
// Nor a name that is not UTF-8, which no pattern can spell.
const PLAIN = NAMES.filter((name) => !/[*?[\]{}()|$^+",\uDC80-\uDCFF]/.test(name) && name !== 'node_modules')
// not "?": picomatch reads `@(?)` as the text "@?" (a "?" just after "(" is literal), its own quirk
const SIMPLE_OPS = ['keep', 'bracket', 'not-bracket', 'caret-bracket', 'posix-class', 'prefix-star'] as const

describe('paths: "something inside X", however it is spelled', () => {
  const runs = Math.ceil(RUNS / 3)
  it(
    `gives X/**, @(X)/**, {X,…}/**, X/**/** and X/**/* one verdict on ${runs} trees`,
    async () => {
      let cases = 0
      await fc.assert(
        fc.asyncProperty(
          tree,
          fc.constantFrom(...PLAIN),
          fc.constantFrom(...SIMPLE_OPS),
          fc.nat(8),
          async (t, name, op, at) => {
            const root = mkdtempSync(join(scratch, 'case-'))
            try {
              const workspace = buildTree(root, t, fifo)
              const ctx = context(workspace, {}, { maxEntries: 1_000_000, timeoutMs: 60_000 })
              const x = rewrite(name, op, { at, other: 'a' })
              cases++
              const spellings = [`${x}/**`, `@(${x})/**`, `{${x},zz-none}/**`, `${x}/**/**`, `${x}/**/*`]
              const statuses = await Promise.all(
                spellings.map(async (p) => (await checkPaths(p, ctx)).status),
              )
              expect(Object.fromEntries(spellings.map((p, i) => [p, statuses[i]]))).toEqual(
                Object.fromEntries(spellings.map((p) => [p, statuses[0]])),
              )
            } finally {
              rmSync(root, { recursive: true, force: true })
            }
          },
        ),
        { numRuns: runs, seed: SEED },
      )
      console.log(
        `paths spellings of X/**: ${cases} trees, 5 spellings each (seed ${SEED}), one verdict each`,
      )
    },
    Math.max(100_000, runs * 300),
  )
})

function patternsOf(specs: PatternSpec[], t: Tree, through: string[][]): string[] {
  return [...new Set(specs.map((s) => patternOf(s, t, through)))]
}

// A path as a report shows it: each byte of a name that is not UTF-8 (a lone U+DC80–U+DCFF) as U+FFFD.
function shown(path: string): string {
  return path.replace(/(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/g, '\uFFFD')
}

// The documented static prefix: the leading segments without a glob character, none when a "|" is in it.
function staticPrefix(pattern: string): string {
  const segments = pattern.split('/')
  const first = pattern.includes('|') ? 0 : segments.findIndex((s) => /[*?[\]{}()|$^+"]/.test(s))
  return segments.slice(0, first).join('/')
}
