// The parts of the contract that `preflight check` and the checks use at run time, without zod: the
// grammar of contextRequires (requirements.ts builds its zod schemas from the same rules and messages)
// and outcomeOf. Loading zod costs a process ~100 ms, twice a bare `node` (docs/benchmarks.md).
import type { ContextRequires } from './requirements.js'

export const MAX_PATHS = 256
export const MAX_EXEC = 256
export const MAX_PATTERN_LENGTH = 512
export const EXEC_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/

export const REQUIREMENT_KINDS = ['paths', 'exec', 'git'] as const
export const GitFact = ['worktree', 'history'] as const
export type GitFact = (typeof GitFact)[number]

export const EMPTY_PATTERN = 'a path pattern must not be empty'
export const LONG_PATTERN = `a path pattern must be at most ${MAX_PATTERN_LENGTH} characters`
export const BAD_EXEC_NAME = 'an exec name must be a bare binary name (letters, digits, "._+-"; no slash)'

// A pattern's length in characters: Unicode code points, as zod's `max` and JSON Schema's `maxLength` count
// them (an emoji is one character, though two UTF-16 units in JavaScript's `length`; a lone surrogate is one).
export function characters(text: string): number {
  return text.length - (text.match(SURROGATE_PAIR)?.length ?? 0)
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g

// The grammar of a path pattern (docs/requirements.md, "paths"), each rule with what it says when broken.
// `[\s\S]`, not `.`: a name may hold a newline, and `.` would let one hide a ".." segment behind it.
export const PATTERN_RULES: readonly (readonly [RegExp, string])[] = [
  [/^[^/]/, 'a path pattern must be relative to the workspace, not absolute'],
  [/^(?!(?:[\s\S]*\/)?\.\.(?:\/|$))/, 'a path pattern must not contain a ".." segment'],
  [/^[^\\]*$/, 'a path pattern must use "/" separators, not backslashes'],
  [/^[^\0]*$/, 'a path pattern must not contain NUL'],
  // a name that is not UTF-8 is read with a lone surrogate for each of its bytes over 127, which only a
  // wildcard may match (docs/requirements.md): no pattern spells one. Pairs pass, with the "u" flag (JSON
  // Schema's) as without it.
  [
    /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/,
    'a path pattern must be valid Unicode: no lone surrogate ("\\udcff")',
  ],
  // the one leading "./" is dropped before picomatch reads a pattern, and picomatch drops one more: `./!x`
  // is read as `!x`, a negation; refused after any run of "./", whatever the rules on "./" below say
  [/^(?!(?:\.\/)*!)/, 'a path pattern must not be a negation (a leading "!", after "./" too)'],
  [/^(?![\s\S]*\/\/)/, 'a path pattern must be in normal form: no empty segment ("a//b")'],
  [
    /^(?:\.\/)?(?!(?:[\s\S]*\/)?\.(?:\/|$))[\s\S]/,
    'a path pattern must be in normal form: no "." segment ("a/./b"), only one leading "./", and a name after it',
  ],
]

// Every rule a path pattern breaks, in the order the zod schema reports them; none when it is valid.
export function pathPatternProblems(pattern: string): string[] {
  const problems: string[] = []
  if (pattern.length < 1) problems.push(EMPTY_PATTERN)
  if (characters(pattern) > MAX_PATTERN_LENGTH) problems.push(LONG_PATTERN)
  for (const [rule, message] of PATTERN_RULES) if (!rule.test(pattern)) problems.push(message)
  return problems
}

export function execNameProblems(name: string): string[] {
  return EXEC_NAME.test(name) ? [] : [BAD_EXEC_NAME]
}

// contextRequires read without zod: the value itself when it is certainly valid, else undefined (the
// caller then asks the zod schema, which says why). It accepts nothing the schema refuses (a property
// test holds it to that), so skipping the schema for what it accepts changes no verdict.
export function plainRequires(value: unknown): ContextRequires | undefined {
  if (!isPlainObject(value)) return undefined
  for (const key of Object.keys(value))
    if (!(REQUIREMENT_KINDS as readonly string[]).includes(key)) return undefined
  const { paths, exec, git } = value
  if (paths !== undefined && !isList(paths, MAX_PATHS, pathPatternProblems)) return undefined
  if (exec !== undefined && !isList(exec, MAX_EXEC, execNameProblems)) return undefined
  if (git !== undefined) {
    if (!isPlainObject(git)) return undefined
    for (const [fact, on] of Object.entries(git))
      if (!(GitFact as readonly string[]).includes(fact) || typeof on !== 'boolean') return undefined
  }
  return value as ContextRequires
}

function isList(value: unknown, max: number, problems: (item: string) => string[]): boolean {
  return (
    Array.isArray(value) &&
    value.length <= max &&
    new Set(value).size === value.length &&
    value.every((item) => typeof item === 'string' && problems(item).length === 0)
  )
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

// A report's outcome from its results: met when every one is met (or there are none), else unmet when
// any is unmet, else error.
export function outcomeOf(results: readonly { status: string }[]): 'met' | 'unmet' | 'error' {
  if (results.every((r) => r.status === 'met')) return 'met'
  return results.some((r) => r.status === 'unmet') ? 'unmet' : 'error'
}
