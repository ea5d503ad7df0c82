// The zod-free reading of contextRequires (src/contract/light.ts) against the zod schemas it stands in
// for: the same messages for every pattern and exec name, and nothing accepted that the schema refuses;
// and the grammar itself, rule by rule, each message word for word.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ContextRequires, ExecName, PathPattern } from '../../src/contract/index.js'
import {
  characters,
  execNameProblems,
  outcomeOf,
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

// What a broken rule says, as a definition's author reads it (and the JSON Schema's consumers do not)
const EMPTY = 'a path pattern must not be empty'
const LONG = 'a path pattern must be at most 512 characters'
const ABSOLUTE = 'a path pattern must be relative to the workspace, not absolute'
const DOT_DOT = 'a path pattern must not contain a ".." segment'
const BACKSLASH = 'a path pattern must use "/" separators, not backslashes'
const NUL = 'a path pattern must not contain NUL'
const UNICODE = 'a path pattern must be valid Unicode: no lone surrogate ("\\udcff")'
const NEGATION = 'a path pattern must not be a negation (a leading "!", after "./" too)'
const EMPTY_SEGMENT = 'a path pattern must be in normal form: no empty segment ("a//b")'
const DOT_SEGMENT =
  'a path pattern must be in normal form: no "." segment ("a/./b"), only one leading "./", and a name after it'
const BAD_EXEC_NAME = 'an exec name must be a bare binary name (letters, digits, "._+-"; no slash)'

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
      expect(pathPatternProblems(pattern).includes(LONG), pattern).toBe(long)
      expect(zodMessages(PathPattern, pattern).includes(LONG), pattern).toBe(long)
    }
    expect(characters('😀é\uDCFF')).toBe(3)
    expect(characters('😀')).toBe(1)
    // half a pair, either half, is one character, as is what stands beside it
    expect(characters('a\uDCFF')).toBe(2)
    expect(characters('\uD83Da')).toBe(2)
    expect(characters('abc')).toBe(3)
    expect(characters('')).toBe(0)
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
      // no prototype at all: still a plain object, to the schema too
      Object.create(null),
    ]) {
      expect(plainRequires(value)).toBe(value)
      expect(ContextRequires.safeParse(value).success).toBe(true)
    }
  })

  it('refuses a bad entry among good ones, an entry that is not a string, an unknown key, what is no plain object', () => {
    for (const value of [
      { paths: ['src/*.ts', '/etc/passwd'] },
      { paths: ['/etc/passwd'] },
      { paths: [1] },
      { exec: ['git', 'a/../../../bin/sh'] },
      { exec: [1] },
      { files: ['a'] },
      { paths: ['a'], exex: ['git'] },
      { git: { worktree: true, shallow: true } },
      undefined,
      'paths',
      // an array is refused whatever its prototype, as the schema refuses it
      Object.setPrototypeOf([], null),
      { git: Object.setPrototypeOf([], null) },
    ]) {
      expect(plainRequires(value), String(JSON.stringify(value))).toBeUndefined()
      expect(ContextRequires.safeParse(value).success).toBe(false)
    }
  })
})

describe('the grammar of a path pattern', () => {
  it.each([
    ['an empty pattern', '', [EMPTY, ABSOLUTE, DOT_SEGMENT]],
    ['a pattern of 513 characters', 'a'.repeat(513), [LONG]],
    ['an absolute pattern', '/etc/passwd', [ABSOLUTE]],
    ['a ".." alone', '..', [DOT_DOT]],
    ['a leading ".." segment', '../etc', [DOT_DOT]],
    ['a trailing ".." segment', 'src/..', [DOT_DOT]],
    ['a ".." segment inside', 'src/../etc', [DOT_DOT]],
    ['a ".." segment after a newline', 'x\n/../etc', [DOT_DOT]],
    ['a ".." segment after a space', 'a b/../c', [DOT_DOT]],
    ['a backslash', 'src\\main.ts', [BACKSLASH]],
    ['a NUL', 'a\0b', [NUL]],
    ['a lone low surrogate', 'x\uDCFF', [UNICODE]],
    ['a lone high surrogate', 'x\uD83D*', [UNICODE]],
    ['a negation', '!x', [NEGATION]],
    ['a negation after "./"', './!x', [NEGATION]],
    ['a negation after "./" twice', '././!x', [NEGATION, DOT_SEGMENT]],
    ['an empty segment', 'a//b', [EMPTY_SEGMENT]],
    ['an empty segment after a longer name', 'src//index.ts', [EMPTY_SEGMENT]],
    ['an empty segment after a space', 'a b//c', [EMPTY_SEGMENT]],
    ['a trailing empty segment', 'dist//', [EMPTY_SEGMENT]],
    ['only "."', '.', [DOT_SEGMENT]],
    ['nothing after "./"', './', [DOT_SEGMENT]],
    ['a repeated leading "./"', '././src', [DOT_SEGMENT]],
    ['a "." segment inside', 'src/./a', [DOT_SEGMENT]],
    ['a trailing "." segment', 'src/.', [DOT_SEGMENT]],
    ['a "." segment after a newline', 'x\n/./a', [DOT_SEGMENT]],
    ['a "." segment after a space', 'a b/./c', [DOT_SEGMENT]],
  ])('refuses %s, saying exactly why', (_why, pattern, problems) => {
    expect(pathPatternProblems(pattern)).toEqual(problems)
  })

  it.each([
    ['a one-character name', 'a'],
    ['a pattern of 512 characters', 'a'.repeat(512)],
    ['a glob', 'src/**/*.ts'],
    ['one leading "./"', './src/*.ts'],
    ['a name that begins with a space', ' a'],
    ['a name that begins with a space, after "./"', './ a'],
    ['a name that merely contains two dots', 'a..b'],
    ['a dotfile directory', '.github/workflows/*.yml'],
    ['an emoji', 'x😀*'],
    ['a "!" that does not lead', 'a/!x'],
  ])('accepts %s', (_what, pattern) => {
    expect(pathPatternProblems(pattern)).toEqual([])
  })
})

describe('the grammar of an exec name', () => {
  it.each([
    ['a path that climbs out of a directory', 'a/../../../bin/sh'],
    ['a relative path', 'bin/node'],
    ['an absolute path', '/bin/sh'],
    ['a leading "."', '.hidden'],
    ['a leading "-"', '-rf'],
    ['a leading "_"', '_x'],
    ['an empty name', ''],
    ['a space', 'a b'],
    ['a name of 129 characters', 'x'.repeat(129)],
  ])('refuses %s', (_why, name) => {
    expect(execNameProblems(name)).toEqual([BAD_EXEC_NAME])
  })

  it.each(['n', 'git', 'node', 'g++', 'python3.12', 'x-y_z', 'x'.repeat(128)])('accepts %j', (name) => {
    expect(execNameProblems(name)).toEqual([])
  })
})

describe('outcomeOf', () => {
  it('is met when every result is met, or there is none', () => {
    expect(outcomeOf([])).toBe('met')
    expect(outcomeOf([{ status: 'met' }])).toBe('met')
    expect(outcomeOf([{ status: 'met' }, { status: 'met' }])).toBe('met')
  })

  it('is unmet when any result is unmet, before an error', () => {
    expect(outcomeOf([{ status: 'unmet' }])).toBe('unmet')
    expect(outcomeOf([{ status: 'error' }, { status: 'unmet' }, { status: 'met' }])).toBe('unmet')
  })

  it('is error when some result is neither met nor unmet', () => {
    expect(outcomeOf([{ status: 'met' }, { status: 'error' }])).toBe('error')
    expect(outcomeOf([{ status: 'error' }])).toBe('error')
  })
})
