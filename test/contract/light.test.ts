// The zod-free reading of contextRequires (src/contract/light.ts) against the zod schemas it stands in
// for: the same messages for every pattern and exec name, and nothing accepted that the schema refuses.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ContextRequires, ExecName, PathPattern } from '../../src/contract/index.js'
import {
  characters,
  execNameProblems,
  LONG_PATTERN,
  PATTERN_RULES,
  pathPatternProblems,
  plainRequires,
} from '../../src/contract/light.js'

const RUNS = Number(process.env.PREFLIGHT_FUZZ_RUNS ?? 2_000)

// strings made mostly of the characters the grammar is about
const patternish = fc.oneof(
  fc.string(),
  fc
    .array(fc.constantFrom('a', 'b', '.', '..', '/', '//', './', '\\', '\0', '!', '*', '\n', '-', '+'), {
      maxLength: 8,
    })
    .map((parts) => parts.join('')),
  fc.string({ minLength: 500, maxLength: 520 }),
  // near the length bound in characters of one and two UTF-16 units, and halves of a pair
  fc
    .array(fc.constantFrom('a', 'é', '😀', '\uD83D', '\uDE00', '\uDCFF'), { minLength: 250, maxLength: 530 })
    .map((parts) => parts.join('')),
  fc
    .array(fc.constantFrom('./', '!', '.', '/', 'a', '../'), { maxLength: 6 })
    .map((parts) => `${parts.join('')}!x`),
)

const ruleSaying = (words: string) => PATTERN_RULES.find(([, message]) => message.includes(words))?.[1]
const NEGATION = ruleSaying('negation')
const UNICODE = ruleSaying('lone surrogate')

const zodMessages = (schema: typeof PathPattern | typeof ExecName, value: string) =>
  schema.safeParse(value).error?.issues.map((i) => i.message) ?? []

// values near a valid contextRequires: known and unknown keys, right and wrong types, duplicates
const requiresish = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      paths: fc.oneof(fc.array(patternish, { maxLength: 4 }), fc.jsonValue()),
      exec: fc.oneof(
        fc.array(fc.constantFrom('node', 'git', 'a/b', '', 'n'), { maxLength: 3 }),
        fc.jsonValue(),
      ),
      git: fc.oneof(
        fc.record(
          { worktree: fc.oneof(fc.boolean(), fc.jsonValue()), history: fc.boolean(), other: fc.boolean() },
          { requiredKeys: [] },
        ),
        fc.jsonValue(),
      ),
      exex: fc.jsonValue(),
    },
    { requiredKeys: [] },
  ),
)

describe('the zod-free contract', () => {
  it('gives every path pattern the messages of the zod schema, in its order', () => {
    fc.assert(
      fc.property(patternish, (p) => {
        expect(pathPatternProblems(p)).toEqual(zodMessages(PathPattern, p))
      }),
      { numRuns: RUNS },
    )
  })

  it('gives every exec name the message of the zod schema', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom('node', 'a/b', '.x', 'x'.repeat(129))), (n) => {
        expect(execNameProblems(n)).toEqual(zodMessages(ExecName, n))
      }),
      { numRuns: RUNS },
    )
  })

  it('accepts a contextRequires only when the schema does, as the schema reads it', () => {
    fc.assert(
      fc.property(requiresish, (value) => {
        const plain = plainRequires(value)
        if (plain === undefined) return
        const parsed = ContextRequires.safeParse(value)
        expect(parsed.success).toBe(true)
        expect(parsed.data).toEqual(plain)
      }),
      { numRuns: RUNS },
    )
  })

  it('counts a pattern in characters, an emoji as one, as the schema does', () => {
    for (const [pattern, long] of [
      ['😀'.repeat(512), false],
      [`${'a'.repeat(511)}😀`, false],
      ['😀'.repeat(513), true],
      [`${'😀'.repeat(512)}a`, true],
    ] as const) {
      expect(pathPatternProblems(pattern).includes(LONG_PATTERN), pattern).toBe(long)
      expect(zodMessages(PathPattern, pattern).includes(LONG_PATTERN), pattern).toBe(long)
    }
    expect(characters('😀é\uDCFF')).toBe(3)
  })

  it('refuses a negation behind any run of "./", whatever the other rules say', () => {
    for (const pattern of ['!x', './!x', '././!x', './././!x'])
      expect(pathPatternProblems(pattern), pattern).toContain(NEGATION)
    expect(pathPatternProblems('a/!x')).toEqual([])
  })

  it('refuses a lone surrogate, which only a name that is not UTF-8 is read with', () => {
    expect(pathPatternProblems('x\uDCFF')).toEqual([UNICODE])
    expect(pathPatternProblems('x\uD83D*')).toEqual([UNICODE])
    expect(pathPatternProblems('x😀*')).toEqual([])
  })

  it('refuses what the schema refuses at the limits, and accepts what a definition usually holds', () => {
    const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i))
    for (const value of [
      { paths: many(257, (i) => `f${i}`) },
      { exec: many(257, (i) => `e${i}`) },
      { paths: ['a', 'a'] },
      { exec: ['git', 'git'] },
      { git: { worktree: 'yes' } },
      { git: { shallow: true } },
      { git: [] },
      { paths: 'a' },
      [],
      null,
      JSON.parse('{"__proto__": {"paths": ["a"]}}'),
      Object.create({ paths: ['a'] }),
    ])
      expect(plainRequires(value), JSON.stringify(value)).toBeUndefined()
    for (const value of [
      {},
      { paths: many(256, (i) => `src/**/f${i}.ts`), exec: many(256, (i) => `e${i}`) },
      { paths: ['./a', '.github/workflows/*.yml'], exec: ['node'], git: { worktree: true, history: false } },
      { git: {} },
    ]) {
      expect(plainRequires(value)).toBe(value)
      expect(ContextRequires.safeParse(value).success).toBe(true)
    }
  })
})
