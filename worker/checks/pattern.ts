// A paths pattern taken apart once: literal or glob, the static prefix a walk starts from, what it may enter.
import picomatch from 'picomatch'

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
  // node_modules/ is entered only when the pattern names it literally
  entersNodeModules: boolean
}

export type PatternPlan = LiteralPlan | GlobPlan

const OPTIONS = { dot: true } as const

// Plans are pure functions of the pattern; compiling picomatch expressions dominates a check of a few
// patterns, so plans are kept across evaluations (bounded: definitions repeat the same patterns).
const plans = new Map<string, PatternPlan>()
const MAX_PLANS = 4096

export function planPattern(input: string): PatternPlan {
  let plan = plans.get(input)
  if (!plan) {
    if (plans.size >= MAX_PLANS) plans.clear()
    plan = compilePattern(input)
    plans.set(input, plan)
  }
  return plan
}

function compilePattern(input: string): PatternPlan {
  const dirOnly = input.endsWith('/')
  const pattern = input.replace(/^(\.\/)+/, '').replace(/\/+$/, '')
  const scan = picomatch.scan(pattern, { parts: true })
  if (!scan.isGlob) return { glob: false, path: pattern, dirOnly }
  const base = scan.base
  const baseDepth = base === '' ? 0 : base.split('/').length
  const rest = (scan.parts ?? []).slice(baseDepth)
  return {
    glob: true,
    base,
    dirOnly,
    matches: matcher(pattern),
    mayEnter: pruner(rest, pattern),
    entersNodeModules: (scan.parts ?? []).includes('node_modules'),
  }
}

// The compiled regular expression alone: picomatch's matcher function adds per-call work a walk cannot afford.
function matcher(pattern: string): Matcher {
  const re = picomatch.makeRe(pattern, OPTIONS)
  return (path) => re.test(path)
}

// Segment by segment up to the first globstar; past it anything may hold a match. When a segment cannot be
// matched on its own (a brace or extglob spanning "/"), nothing is pruned.
function pruner(parts: string[], pattern: string): GlobPlan['mayEnter'] {
  if (pattern.includes('(') || parts.some((p) => p.includes('/'))) return () => true
  const star = parts.findIndex((p) => p.includes('**'))
  const fixed = (star === -1 ? parts : parts.slice(0, star)).map((p) => picomatch(p, OPTIONS))
  return (name, depth) => {
    if (star === -1 && depth >= parts.length) return false
    const segment = fixed[depth - 1]
    if (segment) return segment(name)
    // past the fixed segments: a globstar continues, a pattern without one ends here
    return star !== -1 && depth - 1 >= star
  }
}
