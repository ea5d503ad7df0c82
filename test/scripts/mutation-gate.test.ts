import { describe, expect, it } from 'vitest'
import { problems, type Report, scores } from '../../scripts/mutation-gate.js'

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
    ).toEqual([{ file: 'worker/x.ts', score: 50, detected: 2, undetected: 2, ignored: 1 }])
    expect(scores(report(['Ignored']))[0]?.score).toBe(100)
  })

  it('passes a file whose every mutant was detected or documented', () => {
    expect(problems(report(['Killed', 'Ignored']), '')).toEqual([])
  })

  it('names each survivor and each mutant no test reached, even in a file above the score', () => {
    const many = report([...Array(20).fill('Killed'), 'Survived', 'NoCoverage'])
    expect(problems(many, '')).toEqual([
      'worker/x.ts:1:3 Survived ConditionalExpression → true in: if (ok) run()',
      'worker/x.ts:1:3 NoCoverage ConditionalExpression → true in: if (ok) run()',
    ])
  })

  it('fails a file under 90 %', () => {
    expect(problems(report(['Killed', 'Survived']), '')).toContain('worker/x.ts: 50.00 % is under 90 %')
  })

  it('fails a Stryker disable whose reason docs/mutation.md does not give', () => {
    const source = '// Stryker disable next-line all: only a race\nif (ok) run()'
    expect(problems(report(['Ignored'], source), 'nothing')).toEqual([
      'worker/x.ts:1: the reason "only a race" is not in docs/mutation.md',
    ])
    expect(problems(report(['Ignored'], source), '| x | only a race |')).toEqual([])
  })
})
