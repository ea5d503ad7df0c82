// Path patterns for the differential test of `paths`, derived from a generated tree's own paths (also those
// through its links) so that they often match: segments kept, globbed, bracketed, braced, extglobbed, a "/"
// taken by a class that can match it; and some the grammar refuses (a negation behind a prefix, a lone
// surrogate, one character too many), which the check must refuse too.
import fc from 'fast-check'
import { NAMES, type Tree } from './paths-trees.js'

// How one segment of a node's path becomes a segment of a pattern.
const SEGMENT_OPS = [
  'keep',
  'keep',
  'star',
  'globstar',
  'qmark',
  'bracket',
  'not-bracket',
  'caret-bracket',
  'posix-class',
  'brace',
  'at-extglob',
  'plus-extglob',
  'not-extglob',
  'prefix-star',
  'suffix-star',
  'other-name',
  'pipe',
  'slash-class',
  'as-text',
] as const
export type SegmentOp = (typeof SEGMENT_OPS)[number]

// Classes picomatch compiles to ones that match "/" (and other characters): `{+..0}` is read as `[+-0]`.
const SLASH_CLASSES = [
  '[[:punct:]]',
  '[[:ascii:]]',
  '[[:graph:]]',
  '[[:print:]]',
  '[.-0]',
  '{+..0}',
  '[^[:alpha:]]',
  '[ -~]',
  '[/]',
] as const

// Leads picomatch would read a negation behind, whatever the grammar says of the rest.
const NEGATIONS = ['!', './!', '././!', 'a/../!', './/!'] as const

export interface PatternSpec {
  // start from a node's path, or from a path the tree has through its links (see pathsThrough)
  through: boolean
  node: number
  // drop this many segments from its end
  cut: number
  ops: SegmentOp[]
  // which character an op works on, and which other name it brings in
  at: number
  other: (typeof NAMES)[number]
  // continue with the end of another node's path: a pattern that runs through a link
  onward: number | null
  // the "/" after this segment taken by a class that can match it: `src[[:punct:]]a.ts`
  bridge: number | null
  lead: '' | './' | '**/' | (typeof NEGATIONS)[number]
  tail: 'none' | '/**' | '/' | '/**/' | '/*'
  // padded with a brace of emoji to 500 + this many characters, about the bound of 512
  pad: number | null
}

// a value once in `every` specs, else null
const sometimes = <T>(value: fc.Arbitrary<T>, every: number) =>
  fc.oneof({ weight: every - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: value })

export const patternSpec: fc.Arbitrary<PatternSpec> = fc.record({
  through: fc.boolean(),
  node: fc.nat(400),
  cut: fc.nat(2),
  // plain segments often, so that patterns have a static prefix of some depth
  ops: fc.array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constant('keep' as const) },
      { weight: 4, arbitrary: fc.constantFrom(...SEGMENT_OPS) },
    ),
    { minLength: 1, maxLength: 5 },
  ),
  at: fc.nat(8),
  other: fc.constantFrom(...NAMES),
  onward: fc.option(fc.nat(40)),
  bridge: sometimes(fc.nat(4), 8),
  lead: fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom('' as const, '' as const, './' as const, '**/' as const) },
    { weight: 1, arbitrary: fc.constantFrom(...NEGATIONS) },
  ),
  tail: fc.constantFrom('none', 'none', '/**', '/', '/**/', '/*'),
  pad: sometimes(fc.nat(24), 20),
})

// The pattern a spec makes from a tree; the contract may refuse it.
export function patternOf(spec: PatternSpec, t: Tree, through: string[][] = []): string {
  const paths = t.nodes.map((n) => n.path)
  const starts = spec.through && through.length > 0 ? through : paths
  const from = starts[spec.node % starts.length] ?? ['a']
  const after = spec.onward === null ? [] : (paths[spec.onward % paths.length] ?? []).slice(-2)
  const kept = [...from.slice(0, Math.max(1, from.length - spec.cut)), ...after]
  const parts = kept.map((segment, i) => rewrite(segment, spec.ops[i % spec.ops.length] ?? 'keep', spec))
  let body = parts.join('/')
  if (spec.bridge !== null && parts.length > 1) {
    const j = spec.bridge % (parts.length - 1)
    const by = SLASH_CLASSES[spec.at % SLASH_CLASSES.length]
    body = [...parts.slice(0, j), `${parts[j]}${by}${parts[j + 1]}`, ...parts.slice(j + 2)].join('/')
  }
  const tail = spec.tail === 'none' ? '' : spec.tail
  const pattern = `${spec.lead}${body}${tail}`
  if (spec.pad === null) return pattern
  // `{x,😀😀…}` for the first segment x: the same matches, 2 UTF-16 units a character of the padding
  const emoji = 500 + spec.pad - [...pattern].length - 3
  if (emoji < 1) return pattern
  const [first = '', ...rest] = body.split('/')
  return `${spec.lead}${[`{${first},${'😀'.repeat(emoji)}}`, ...rest].join('/')}${tail}`
}

export function rewrite(segment: string, op: SegmentOp, spec: Pick<PatternSpec, 'at' | 'other'>): string {
  const chars = [...segment]
  const i = spec.at % chars.length
  const c = chars[i] ?? 'a'
  const swap = (by: string) => [...chars.slice(0, i), by, ...chars.slice(i + 1)].join('')
  switch (op) {
    case 'keep':
      return segment
    case 'star':
      return '*'
    case 'globstar':
      return '**'
    case 'qmark':
      return swap('?')
    case 'bracket':
      return swap(`[${c}z]`)
    case 'not-bracket':
      return swap(`[!${c === 'k' ? 'x' : 'k'}]`)
    case 'caret-bracket':
      return swap(`[^${c}]`)
    case 'posix-class':
      return swap('[[:alpha:]]')
    case 'brace':
      return `{${segment},${spec.other}}`
    case 'at-extglob':
      return `@(${segment}|${spec.other})`
    case 'plus-extglob':
      return `+(${segment})`
    case 'not-extglob':
      return `!(${spec.other})`
    case 'prefix-star':
      return `*${chars.slice(i).join('')}`
    case 'suffix-star':
      return `${chars.slice(0, i + 1).join('')}*`
    case 'other-name':
      return spec.other
    case 'pipe':
      return `${segment}|${spec.other}`
    case 'slash-class':
      return swap(SLASH_CLASSES[spec.at % SLASH_CLASSES.length] ?? '[/]')
    case 'as-text':
      // each byte of a name that is not UTF-8 as U+FFFD, the way a string listing shows it
      return segment.replace(/[\uDC80-\uDCFF]/g, '\uFFFD')
  }
}
