import { describe, expect, it } from 'vitest'
import { crashes, type Equivalent, problems, type Report, scores } from '../../scripts/mutation-gate.js'

const mutant = (status: string, line = 1) => ({
  status,
  mutatorName: 'ConditionalExpression',
  replacement: 'true',
  location: { start: { line, column: 3 } },
})

function report(statuses: string[], source = 'if (ok) run()'): Report {
  return { files: { 'worker/x.ts': { source, mutants: statuses.map((s) => mutant(s)) } } }
}

describe('the mutation gate', () => {
  it('scores what was killed or timed out over what was not, leaving equivalent and invalid mutants out', () => {
    expect(
      scores(report(['Killed', 'Timeout', 'Survived', 'NoCoverage', 'Ignored', 'CompileError'])),
    ).toEqual([{ file: 'worker/x.ts', score: 50, detected: 2, undetected: 2, ignored: 1, crashed: 0 }])
    expect(scores(report(['Ignored']))[0]?.score).toBe(100)
  })

  it('counts a mutant that crashed the test runner as detected, and names it with why', () => {
    const crashed = report(['Killed', 'RuntimeError', 'Survived'])
    const runtime = crashed.files['worker/x.ts']?.mutants[1]
    if (runtime) runtime.statusReason = 'Test runner crashed.\nat …'
    expect(scores(crashed)).toEqual([
      { file: 'worker/x.ts', score: (100 * 2) / 3, detected: 2, undetected: 1, ignored: 0, crashed: 1 },
    ])
    expect(crashes(crashed)).toEqual([
      'worker/x.ts:1:3 RuntimeError ConditionalExpression → true in: if (ok) run() (Test runner crashed.)',
    ])
  })

  it('passes a file whose every mutant was detected or documented', () => {
    expect(problems(report(['Killed', 'Ignored']), [])).toEqual([])
  })

  it('names each survivor and each mutant no test reached, even in a file above the score', () => {
    const many = report([...Array(20).fill('Killed'), 'Survived', 'NoCoverage'])
    expect(problems(many, [])).toEqual([
      'worker/x.ts:1:3 Survived ConditionalExpression → true in: if (ok) run()',
      'worker/x.ts:1:3 NoCoverage ConditionalExpression → true in: if (ok) run()',
    ])
  })

  it('fails a file under 90 %', () => {
    expect(problems(report(['Killed', 'Survived']), [])).toContain('worker/x.ts: 50.00 % is under 90 %')
  })

  const sameRun: Equivalent = {
    file: 'worker/x.ts',
    code: 'if (ok) run()',
    mutants: [['ConditionalExpression', 'true']],
    why: 'running it twice is running it once',
  }

  it('counts a survivor the config lists as equivalent, by its file, line, mutator and replacement', () => {
    const survived = report(['Killed', 'Survived'])
    expect(problems(survived, [sameRun])).toEqual([])
    expect(scores(survived, [sameRun])).toEqual([
      { file: 'worker/x.ts', score: 100, detected: 1, undetected: 0, ignored: 1, crashed: 0 },
    ])
    // the same mutator with another replacement, or on another line, is not the listed mutant
    const other = { ...sameRun, mutants: [['ConditionalExpression', 'false']] } satisfies Equivalent
    expect(problems(survived, [other])).toContain(
      'worker/x.ts:1:3 Survived ConditionalExpression → true in: if (ok) run()',
    )
    expect(problems(survived, [{ ...sameRun, code: 'if (ok) stop()' }])).toContain(
      'worker/x.ts:1:3 Survived ConditionalExpression → true in: if (ok) run()',
    )
  })

  it('fails a listed mutant that no longer exists, and any Stryker comment in a mutated file', () => {
    expect(problems(report(['Killed'], 'if (ok) walk()'), [sameRun])).toEqual([
      'stryker.config.mjs: no ConditionalExpression → true in worker/x.ts on: if (ok) run()',
    ])
    const commented = '// Stryker disable next-line all: only a race\nif (ok) run()'
    expect(problems(report(['Ignored'], commented), [])).toEqual([
      'worker/x.ts:1: a Stryker comment; equivalent mutants are listed in stryker.config.mjs',
    ])
  })

  it('reads the equivalent mutants stryker.config.mjs exports, each with a reason', async () => {
    const config: string = new URL('../../stryker.config.mjs', import.meta.url).href
    const { equivalent } = (await import(config)) as { equivalent: Equivalent[] }
    expect(equivalent.length).toBeGreaterThan(20)
    for (const e of equivalent) expect(e.why.length, e.code).toBeGreaterThan(20)
  })
})
