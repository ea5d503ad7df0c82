// Path patterns for the differential test of `paths`, derived from a generated tree's own paths (also those
// through its links) so that they often match: segments kept, globbed, bracketed, braced, extglobbed.
import fc from 'fast-check'
import { PathPattern } from '../../src/contract/index.js'
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
] as const
export type SegmentOp = (typeof SEGMENT_OPS)[number]

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
  lead: '' | './' | '**/'
  tail: 'none' | '/**' | '/' | '/**/' | '/*'
}

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
  lead: fc.constantFrom('', '', './', '**/'),
  tail: fc.constantFrom('none', 'none', '/**', '/', '/**/', '/*'),
})

// The pattern a spec makes from a tree, or undefined when the contract would refuse it.
export function patternOf(spec: PatternSpec, t: Tree, through: string[][] = []): string | undefined {
  const paths = t.nodes.map((n) => n.path)
  const starts = spec.through && through.length > 0 ? through : paths
  const from = starts[spec.node % starts.length] ?? ['a']
  const after = spec.onward === null ? [] : (paths[spec.onward % paths.length] ?? []).slice(-2)
  const kept = [...from.slice(0, Math.max(1, from.length - spec.cut)), ...after]
  const parts = kept.map((segment, i) => rewrite(segment, spec.ops[i % spec.ops.length] ?? 'keep', spec))
  const pattern = `${spec.lead}${parts.join('/')}${spec.tail === 'none' ? '' : spec.tail}`
  return PathPattern.safeParse(pattern).success ? pattern : undefined
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
  }
}
