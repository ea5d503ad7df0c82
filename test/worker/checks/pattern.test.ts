// Compiled path patterns are kept across evaluations, but not without bound: a worker serving many
// different definitions must not grow the cache for as long as it runs.
import fc from 'fast-check'
import picomatch from 'picomatch'
import { describe, expect, it } from 'vitest'
import { PathPattern } from '../../../src/contract/index.js'
import {
  type GlobPlan,
  MATCH_OPTIONS,
  matchedAs,
  planPattern,
  readPattern,
} from '../../../worker/checks/pattern.js'

describe('planPattern', () => {
  it('reuses a compiled plan', () => {
    expect(planPattern('src/**/*.ts')).toBe(planPattern('src/**/*.ts'))
  })

  it('keeps 4,096 plans, and starts over at the next', () => {
    // compile until the cache starts over: then it holds the last pattern and the sentinel
    const sentinel = planPattern('sentinel/**/*.ts')
    for (let i = 0; planPattern('sentinel/**/*.ts') === sentinel; i++) planPattern(`fill${i}/**/*.md`)
    const kept = planPattern('kept/**/*.ts')
    for (let i = 0; i < 4_093; i++) planPattern(`more${i}/**/*.md`)
    expect(planPattern('kept/**/*.ts')).toBe(kept)
    planPattern('one-more/**/*.md')
    expect(planPattern('kept/**/*.ts')).not.toBe(kept)
  })

  it('starts over once 4,096 different patterns were compiled', () => {
    const first = planPattern('first/**/*.ts')
    for (let i = 0; i < 4_096; i++) planPattern(`p${i}/**/*.md`)
    expect(planPattern('first/**/*.ts')).not.toBe(first)
    expect(planPattern('first/**/*.ts')).toMatchObject({ glob: true, base: 'first' })
  })
})

describe('reading a pattern', () => {
  it('drops one leading "./" and reads a trailing "/" as "a directory"', () => {
    expect(readPattern('./src/*.ts')).toEqual({ pattern: 'src/*.ts', dirOnly: false })
    expect(readPattern('./dist/')).toEqual({ pattern: 'dist', dirOnly: true })
  })

  it('matches a last "**" as one segment or more, and nothing else differently', () => {
    expect(matchedAs('src/generated/**')).toBe('src/generated/**/*')
    expect(matchedAs('**')).toBe('**/*')
    expect(matchedAs('src/**/*.ts')).toBe('src/**/*.ts')
    expect(matchedAs('src/a**')).toBe('src/a**')
  })

  it('keeps the exact-string rule in the matcher a walk uses', () => {
    const plan = planPattern('docs/a(b).txt')
    expect(plan).toMatchObject({ glob: true, base: 'docs' })
    const matches = (plan as GlobPlan).matches
    expect([matches('docs/a(b).txt'), matches('docs/ab.txt'), matches('docs/a.txt')]).toEqual([
      true,
      true,
      false,
    ])
  })

  // picomatch drops one more leading "./" and reads a "!" it then starts with as a negation of the rest
  it('gives picomatch no pattern it reads as a negation, whatever comes before the "!"', () => {
    const piece = fc.constantFrom('./', '.', '/', '!', '!(', '(', ')', '*', 'a', '../', '{', ',', '}', '@')
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (pieces) => {
        const input = pieces.join('')
        if (!PathPattern.safeParse(input).success) return
        const given = matchedAs(readPattern(input).pattern)
        const { state } = picomatch.makeRe(given, MATCH_OPTIONS, false, true) as RegExp & {
          state: { negated: boolean }
        }
        expect(state.negated, input).toBe(false)
        expect(picomatch.scan(given).negated, input).toBe(false)
      }),
      { numRuns: 5_000, seed: 16 },
    )
  })

  it('throws for a pattern the contract refuses, rather than matching it', () => {
    expect(() => planPattern('src//a.ts')).toThrow(/normal form/)
    expect(() => planPattern('../x')).toThrow(/"\.\."/)
  })
})

// The premise of a literal: without any of picomatch's characters, its matcher accepts the pattern and
// nothing one edit away from it (a character changed, added or dropped).
describe('a literal pattern', () => {
  const alphabet = [..."ab./!@,-:=#%&~é日 '<>;`\t"]
  const edits = [...alphabet, ...'*?[]{}()|$^+"x']
  const literal = fc
    .array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 8 })
    .map((chars) => chars.join(''))
    .filter((p) => PathPattern.safeParse(p).success && !p.endsWith('/') && !p.startsWith('./'))

  it('is accepted by picomatch as itself and as nothing one edit away', () => {
    fc.assert(
      fc.property(literal, (pattern) => {
        expect(planPattern(pattern)).toMatchObject({ glob: false, path: pattern })
        const accepts = picomatch(pattern, MATCH_OPTIONS)
        expect(accepts(pattern)).toBe(true)
        for (let i = 0; i <= pattern.length; i++) {
          const near = [pattern.slice(0, i) + pattern.slice(i + 1)]
          for (const c of edits)
            near.push(
              pattern.slice(0, i) + c + pattern.slice(i),
              pattern.slice(0, i) + c + pattern.slice(i + 1),
            )
          // one expect per position: an expect per candidate was 14 s of the suite's CPU
          expect(near.filter((other) => other !== pattern && other !== '' && accepts(other))).toEqual([])
        }
      }),
      { numRuns: 1_000, seed: 16 },
    )
  })

  it.each([...'*?[]{}()|$^+"'])('is a glob once it holds %s', (c) => {
    expect(planPattern(`a${c}b`)).toMatchObject({ glob: true })
  })

  it('is what picomatch passes through raw otherwise: a glob, matched as picomatch does', () => {
    for (const pattern of ['a/b|c', '$$', 'a)+', '"x"'])
      expect(planPattern(pattern)).toMatchObject({ glob: true })
    const matches = (planPattern('a/b|c') as GlobPlan).matches
    expect([matches('a/b'), matches('c'), matches('a/b|c')]).toEqual([true, true, true])
  })
})

// A class picomatch compiles to one that can match "/" lets one segment of the pattern match several of a
// path: the walk may then prune nothing below the static prefix.
describe('a class that can match "/"', () => {
  it.each(['a[[:punct:]]b', 'a[[:ascii:]]b', 'a[[:graph:]]b', 'a[.-0]b', 'a{+..0}b', 'a[^[:alpha:]]b'])(
    'leaves every directory to enter in %s, which picomatch matches to a/b',
    (pattern) => {
      expect(picomatch(pattern, MATCH_OPTIONS)('a/b')).toBe(true)
      const plan = planPattern(pattern) as GlobPlan
      expect(plan.mayEnter('a', 1)).toBe(true)
      expect(plan.matches('a/b')).toBe(true)
    },
  )

  it.each(['a[!x]b', 'a[^x]b', 'a[x-z]b'])('still prunes for %s, which it does not', (pattern) => {
    expect(picomatch(pattern, MATCH_OPTIONS)('a/b')).toBe(false)
    expect((planPattern(pattern) as GlobPlan).mayEnter('a', 1)).toBe(false)
  })

  // picomatch escapes a "[" and a "]" outside a class (`\^\]\[\/`): read as escapes, they open no class
  it('still prunes for ^][/^.*, whose brackets are no class', () => {
    const plan = planPattern('^][/^.*') as GlobPlan
    expect(plan.mayEnter('^][', 1)).toBe(true)
    expect(plan.mayEnter('x', 1)).toBe(false)
    expect(plan.matches('^][/^.ts')).toBe(true)
  })
})

// picomatch rebuilds its expression from its tokens after a POSIX class, a brace range or stars run
// together, and a "." it had escaped is then a bare "." (any character, "/" too).
describe('a pattern picomatch rebuilds', () => {
  it.each([
    ['a.b/[[:digit:]]', 'a/b/1', ''],
    ['src/x.*/[[:alpha:]]', 'src/x/b/c', 'src'],
    ['v.{1..3}/x', 'v/1/x', ''],
  ])('%s, which picomatch matches to %s, is walked from %j and prunes nothing', (pattern, path, base) => {
    expect(picomatch(pattern, MATCH_OPTIONS)(path)).toBe(true)
    const plan = planPattern(pattern) as GlobPlan
    expect(plan).toMatchObject({ glob: true, base })
    expect(plan.mayEnter('a', 1)).toBe(true)
    expect(plan.matches(path)).toBe(true)
  })
})

// A brace or a class whose "/" cuts it in two segments cannot be matched a segment at a time.
describe('a brace or a class that spans a "/"', () => {
  it.each([
    ['{a/b,c}/x', 'a/b/x'],
    ['x{y,a/b}', 'xa/b'],
    ['a[/]b/c', 'a/b/c'],
    // a negated class cut by its "/": it matches a name of one segment ("xcy")
    ['x[!a/b]y/z', 'xcy/z'],
    // picomatch escapes a "[" in a class (`[&/\[]`): a class is read past its escapes
    [']~[&/[]^%', ']~/^%'],
  ])('leaves every directory to enter in %s, which picomatch matches to %s', (pattern, path) => {
    expect(picomatch(pattern, MATCH_OPTIONS)(path)).toBe(true)
    const plan = planPattern(pattern) as GlobPlan
    expect(plan.mayEnter(path.split('/')[0] as string, 1)).toBe(true)
    expect(plan.matches(path)).toBe(true)
  })
})
