// Compiled path patterns are kept across evaluations, but not without bound: a worker serving many
// different definitions must not grow the cache for as long as it runs.
import { describe, expect, it } from 'vitest'
import { planPattern } from '../../../worker/checks/pattern.js'

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
