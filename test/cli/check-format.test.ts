// The report's forms: the reason phrase, colour in text, JUnit against the schemas CI tools read it by.
import { describe, expect, it } from 'vitest'
import { render } from '../../src/cli/check-format.js'
import { junit } from '../../src/cli/check-junit.js'
import { why } from '../../src/cli/check-why.js'
import { type CheckReport, type CheckResult, Reason, RequirementKind } from '../../src/contract/index.js'
import { SCHEMAS, validate } from './junit-schemas.js'

const result = (r: Partial<CheckResult> & Pick<CheckResult, 'status'>): CheckResult => ({
  kind: 'paths',
  requirement: 'README.md',
  observed: {},
  durationMs: 1.5,
  ...r,
})

function report(results: CheckResult[], workspace = '/work/ws'): CheckReport {
  const outcome = results.every((r) => r.status === 'met')
    ? 'met'
    : results.some((r) => r.status === 'unmet')
      ? 'unmet'
      : 'error'
  return {
    outcome,
    declared: results.length > 0,
    workspace,
    results,
    startedAt: '2026-05-01T10:00:00.000Z',
    finishedAt: '2026-05-01T10:00:00.250Z',
  }
}

const MIXED = report([
  result({ status: 'met', observed: { match: 'README.md' } }),
  result({
    status: 'unmet',
    requirement: 'pnpm-lock.yaml',
    reason: 'no-match',
    observed: { entriesScanned: 3 },
  }),
  result({
    status: 'error',
    kind: 'git',
    requirement: 'worktree',
    reason: 'timeout',
    observed: { timeoutMs: 10 },
  }),
  result({
    status: 'unmet',
    kind: 'exec',
    requirement: 'pnpm',
    reason: 'not-found',
    observed: { name: 'pnpm' },
  }),
])

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

describe('text', () => {
  it('colours the statuses when asked, and only then', () => {
    expect(render(MIXED, 'text', { colour: true })).toContain('\u001b[31munmet')
    expect(render(MIXED, 'text', { colour: false })).not.toContain('\u001b[')
    expect(render(MIXED, 'json')).not.toContain('\u001b[')
  })
})

describe('JUnit', () => {
  const xml = junit(MIXED, 'ci-runner')

  it('writes <failure> for unmet, <error> for error, and counts them on the <testsuite>', () => {
    expect(xml.match(/<testcase /g)).toHaveLength(4)
    expect(xml.match(/<failure /g)).toHaveLength(2)
    expect(xml.match(/<error /g)).toHaveLength(1)
    expect(xml).toContain('<error message="error: timeout: no verdict within 10 ms" type="timeout">')
    expect(xml).toMatch(
      /<testsuite name="\/work\/ws" tests="4" failures="2" errors="1" skipped="0" time="0.250"/,
    )
  })

  it.each(Object.entries(SCHEMAS))('is valid against the %s schema', (_, xsd) => {
    const nasty = report([
      result({
        status: 'unmet',
        requirement: 'x<y>"z"&\'.txt',
        reason: 'no-match',
        observed: { why: '\u0001' },
      }),
    ])
    for (const doc of [xml, junit(nasty), junit(report([])), junit(report([result({ status: 'met' })]))]) {
      expect(validate(doc, xsd)).toMatchObject({ ok: true })
    }
  })

  // why the counts are not on <testsuites> too: Ant's schema allows no attribute there
  it('would not be valid against Ant’s schema with counts on <testsuites>', () => {
    expect(validate(xml.replace('<testsuites>', '<testsuites tests="4">'), SCHEMAS.ant)).toMatchObject({
      ok: false,
    })
    expect(validate(xml.replace('<testsuites>', '<testsuites tests="4">'), SCHEMAS.jenkins)).toMatchObject({
      ok: true,
    })
  })
})
