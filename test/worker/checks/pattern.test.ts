// Compiled path patterns are kept across evaluations, but not without bound: a worker serving many
// different definitions must not grow the cache for as long as it runs.
import { describe, expect, it } from 'vitest'
import { type GlobPlan, matchedAs, planPattern, readPattern } from '../../../worker/checks/pattern.js'

describe('planPattern', () => {
  it('reuses a compiled plan', () => {
    expect(planPattern('src/**/*.ts')).toBe(planPattern('src/**/*.ts'))
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

  it('throws for a pattern the contract refuses, rather than matching it', () => {
    expect(() => planPattern('src//a.ts')).toThrow(/normal form/)
    expect(() => planPattern('../x')).toThrow(/"\.\."/)
  })
})
