// A paths pattern read once (docs/requirements.md, "paths"): literal or glob, its one matcher, the static
// prefix a walk starts from, the directories below it that can hold a match.
import picomatch from 'picomatch'
import { pathPatternProblems } from '../../src/contract/light.js'

export type Matcher = (path: string) => boolean

export interface LiteralPlan {
  glob: false
  // workspace-relative path to stat
  path: string
  dirOnly: boolean
}

export interface GlobPlan {
  glob: true
  // workspace-relative static prefix; '' is the workspace itself
  base: string
  dirOnly: boolean
  matches: Matcher
  // whether a directory at this depth below the base (1 = a child of the base) can hold a match
  mayEnter: (name: string, depth: number) => boolean
  // node_modules is seen only when a segment of the pattern is literally `node_modules`
  namesNodeModules: boolean
}

export type PatternPlan = LiteralPlan | GlobPlan

// The contract's reading of picomatch: dotfiles match, bracket classes are POSIX (`[!a]` negates, as `[^a]`
// does; `[[:alpha:]]`), `/` is the only separator whatever the platform.
export const MATCH_OPTIONS = { dot: true, posix: true, windows: false } as const

// Plans are pure functions of the pattern; compiling picomatch expressions dominates a check of a few
// patterns, so plans are kept across evaluations (bounded: definitions repeat the same patterns).
const plans = new Map<string, PatternPlan>()
const MAX_PLANS = 4096

// Throws for a pattern the contract refuses: the evaluator reports those before a checker runs.
export function planPattern(input: string): PatternPlan {
  let plan = plans.get(input)
  if (!plan) {
    const [problem] = pathPatternProblems(input)
    if (problem) throw new Error(`invalid path pattern ${JSON.stringify(input)}: ${problem}`)
    if (plans.size >= MAX_PLANS) plans.clear()
    plan = compilePattern(input)
    plans.set(input, plan)
  }
  return plan
}

export interface ReadPattern {
  // what picomatch is given: without the one leading "./" and the trailing "/" the grammar allows
  pattern: string
  dirOnly: boolean
}

export function readPattern(input: string): ReadPattern {
  const dirOnly = input.endsWith('/')
  const pattern = input.slice(input.startsWith('./') ? 2 : 0, dirOnly ? -1 : undefined)
  return { pattern, dirOnly }
}

// A last segment `**` stands for one segment or more: `dir/**` is matched as `dir/**/*`, so the directory
// itself is not a match (picomatch alone accepts `dir` for `dir/**` and `{dir,x}/**`, not for `*/**`).
export function matchedAs(pattern: string): string {
  return pattern === '**' || pattern.endsWith('/**') ? `${pattern}/*` : pattern
}

// The characters picomatch gives a meaning somewhere: globs, classes, braces, extglobs, "…" quotes, and
// those it passes into its regular expression as they are (`a/b|c` matches `c`, `$$` matches `$`, `a)+`
// matches `a))`). Without any of them, picomatch's matcher accepts nothing but the pattern itself.
const GLOB_CHARS = /[*?[\]{}()|$^+"]/

function compilePattern(input: string): PatternPlan {
  const { pattern, dirOnly } = readPattern(input)
  if (!GLOB_CHARS.test(pattern)) return { glob: false, path: pattern, dirOnly }
  const segments = pattern.split('/')
  // with picomatch's reading of the pattern (returnState)
  const re = picomatch.makeRe(matchedAs(pattern), MATCH_OPTIONS, false, true) as Compiled
  // Rebuilt from its tokens (after a POSIX class, a brace range, stars run together), picomatch's expression
  // may have a "." of the pattern as a bare "." (any character: `a.b/[[:digit:]]` matches `a/b/1`): a
  // segment with a "." may then match several of a path, and nothing is pruned.
  const rebuilt = re.state.backtrack === true
  const glob = rebuilt ? /[*?[\]{}()|$^+".]/ : GLOB_CHARS
  // the static prefix: the leading plain segments, none when a "|" may split the whole expression
  const plain = pattern.includes('|') ? 0 : segments.findIndex((segment) => glob.test(segment))
  return {
    glob: true,
    base: segments.slice(0, plain).join('/'),
    dirOnly,
    // picomatch's matcher, exact-string rule included (`docs/a(b).txt` names the file of that name, though
    // its regular expression reads `(b)` as a group), without the per-call work of picomatch's function
    matches: (path) => path === pattern || re.test(path),
    mayEnter: rebuilt ? () => true : pruner(segments.slice(plain), pattern, re),
    namesNodeModules: segments.includes('node_modules'),
  }
}

// makeRe's returnState gives every expression its state
type Compiled = RegExp & { state: { backtrack?: boolean } }

// Segment by segment up to the first globstar; past it anything may hold a match. When a segment cannot be
// matched on its own — a brace, bracket, extglob, quote or "|" that may span a "/", a class that can match
// "/", or a "$", which picomatch compiles differently in a pattern of one segment ("$$*" does not match
// "$$") — nothing is pruned. A segment's matcher keeps the exact-string rule: a path equal to the pattern
// has each segment equal to its.
function pruner(parts: string[], pattern: string, re: RegExp): GlobPlan['mayEnter'] {
  if (/[(|"$]/.test(pattern) || !parts.every(balanced) || classMatchesSlash(re)) return () => true
  const star = parts.findIndex((p) => p.includes('**'))
  // up to the globstar; without one (star -1) all but the last segment, below which nothing is entered
  const fixed = parts.slice(0, star).map((p) => picomatch(p, MATCH_OPTIONS))
  return (name, depth) => {
    if (star === -1 && depth >= parts.length) return false
    const segment = fixed[depth - 1]
    if (segment) return segment(name)
    // past the fixed segments, at the globstar or below it: anything may hold a match
    return true
  }
}

// As many "[" as "]" and "{" as "}": no class or brace is cut by the "/" around this segment.
function balanced(segment: string): boolean {
  // as many pieces split at "[" as at "]": as many of each
  const pieces = (c: string) => segment.split(c).length
  return pieces('[') === pieces(']') && pieces('{') === pieces('}')
}

// The bracket classes of a regular expression's source, escapes stepped over (outside a class and in it).
const CLASSES = /\\[\s\S]|\[(?:\\[\s\S]|[^\\\]])*\]/g

// Whether a class of picomatch's expression can match "/", so that one segment of the pattern can match
// several of a path: `[[:punct:]]`, `[[:ascii:]]`, `[.-0]`, `{+..0}` (read as `[+-0]`) and `[^[:alpha:]]`
// can (picomatch keeps "/" out of `[^a]`, not out of a negated class that holds a POSIX class).
function classMatchesSlash(re: RegExp): boolean {
  return re.source.match(CLASSES)?.some((c) => c.startsWith('[') && new RegExp(c).test('/')) === true
}
