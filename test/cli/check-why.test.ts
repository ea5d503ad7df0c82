// The reason phrase of a result: a reason is never printed with nothing after it.
import { describe, expect, it } from 'vitest'
import { why } from '../../src/cli/check-why.js'
import { Reason, RequirementKind } from '../../src/contract/index.js'
import { result } from '../support/check-fixtures.js'

describe('the reason phrase', () => {
  it('says what a timeout waited for, never "timeout: " with nothing after it', () => {
    expect(why(result({ status: 'error', reason: 'timeout', observed: { timeoutMs: 10_000 } }))).toBe(
      'timeout: no verdict within 10000 ms',
    )
  })

  // Every reason with every status and kind, observed as bare as a result can be: a phrase, never a
  // code and a colon with nothing after them.
  const bare = Object.values(Reason).flatMap((reason) =>
    (['unmet', 'error'] as const).flatMap((status) =>
      RequirementKind.options.map((kind) => result({ status, kind, reason, observed: {} })),
    ),
  )
  it.each(bare.map((r) => [`${r.status} ${r.kind} ${r.reason}`, r] as const))('has text for %s', (_, r) => {
    const text = why(r)
    expect(text).toMatch(new RegExp(`^${r.reason}: \\S`))
    expect(text).not.toMatch(/: *$|undefined|null/)
  })

  it('has text for a result with no reason and nothing observed, and for a met one of each kind', () => {
    expect(why(result({ status: 'error' }))).toBe('error')
    for (const kind of RequirementKind.options) expect(why(result({ status: 'met', kind }))).not.toBe('')
  })

  it('says the facts of git, a worktree or none', () => {
    const observed = { toplevel: null, head: null, shallow: false }
    expect(why(result({ status: 'unmet', kind: 'git', reason: 'not-a-worktree', observed }))).toBe(
      'not-a-worktree: no worktree, no commit',
    )
  })
})
