// The coordinator's verdict on a report, as a pure function: every row of the table is a report a worker (of
// this version, another one, or a broken one) could send for a definition, and the judgement it must get.
import { describe, expect, it } from 'vitest'
import type { CheckResult, ContextRequires, Outcome, PreflightReport } from '../../../src/contract/index.js'
import { endingReasons, judgeReport, replay, statusAfter } from '../../../src/coordinator/dispatch/judge.js'

const REQUIRES: ContextRequires = { paths: ['package.json'], exec: ['node'], git: { worktree: true } }

function result(
  kind: CheckResult['kind'],
  requirement: string,
  status: CheckResult['status'] = 'met',
): CheckResult {
  return {
    kind,
    requirement,
    status,
    ...(status === 'met' ? {} : { reason: status === 'unmet' ? 'not-found' : 'timeout' }),
    observed: { seen: requirement },
    durationMs: 7,
  }
}

const pkg = (status?: CheckResult['status']) => result('paths', 'package.json', status)
const node = (status?: CheckResult['status']) => result('exec', 'node', status)
const worktree = (status?: CheckResult['status']) => result('git', 'worktree', status)

const missing = (kind: CheckResult['kind'], requirement: string) => ({
  kind,
  requirement,
  status: 'unmet',
  reason: 'report-incomplete',
  observed: { missing: true },
  durationMs: 0,
})

const extra = (r: CheckResult) => ({
  kind: r.kind,
  requirement: r.requirement,
  status: 'unmet',
  reason: 'report-incomplete',
  observed: { extra: true, reported: { status: r.status, reason: r.reason, observed: r.observed } },
  durationMs: r.durationMs,
})

interface Row {
  requires: ContextRequires | undefined
  results: CheckResult[]
  claimed?: Outcome
  outcome: Outcome
  declared: boolean
  incomplete: boolean
  // the judged rows when they are not the reported ones
  rows?: unknown[]
}

const table: Record<string, Row> = {
  'nothing declared, nothing reported': {
    requires: undefined,
    results: [],
    outcome: 'met',
    declared: false,
    incomplete: false,
  },
  'an empty contextRequires declares nothing': {
    requires: { paths: [], exec: [], git: {} },
    results: [],
    outcome: 'met',
    declared: false,
    incomplete: false,
  },
  'every declared requirement met, in order': {
    requires: REQUIRES,
    results: [pkg(), node(), worktree()],
    outcome: 'met',
    declared: true,
    incomplete: false,
  },
  'one unmet': {
    requires: REQUIRES,
    results: [pkg(), node('unmet'), worktree()],
    outcome: 'unmet',
    declared: true,
    incomplete: false,
  },
  'one error and the rest met': {
    requires: REQUIRES,
    results: [pkg(), node(), worktree('error')],
    outcome: 'error',
    declared: true,
    incomplete: false,
  },
  'unmet outranks error': {
    requires: REQUIRES,
    results: [pkg('error'), node('unmet'), worktree('error')],
    outcome: 'unmet',
    declared: true,
    incomplete: false,
  },
  'a claimed met over unmet results': {
    requires: REQUIRES,
    results: [pkg(), node('unmet'), worktree()],
    claimed: 'met',
    outcome: 'unmet',
    declared: true,
    incomplete: false,
  },
  'a worker that says error over met results (it could not read the claim)': {
    requires: REQUIRES,
    results: [pkg(), node(), worktree()],
    claimed: 'error',
    outcome: 'error',
    declared: true,
    incomplete: false,
  },
  'a worker that says error with nothing declared': {
    requires: undefined,
    results: [],
    claimed: 'error',
    outcome: 'error',
    declared: false,
    incomplete: false,
  },
  'the last result missing': {
    requires: REQUIRES,
    results: [pkg(), node()],
    outcome: 'unmet',
    declared: true,
    incomplete: true,
    rows: [pkg(), node(), missing('git', 'worktree')],
  },
  'the first result missing': {
    requires: REQUIRES,
    results: [node(), worktree()],
    outcome: 'unmet',
    declared: true,
    incomplete: true,
    rows: [missing('paths', 'package.json'), node(), worktree()],
  },
  'results for a definition that declares nothing': {
    requires: {},
    results: [pkg()],
    outcome: 'unmet',
    declared: false,
    incomplete: true,
    rows: [extra(pkg())],
  },
  'an extra result after every declared one': {
    requires: REQUIRES,
    results: [pkg(), node(), worktree(), result('exec', 'pnpm')],
    outcome: 'unmet',
    declared: true,
    incomplete: true,
    rows: [pkg(), node(), worktree(), extra(result('exec', 'pnpm'))],
  },
  'a result repeated: the first one counts, the repeat is an extra': {
    requires: REQUIRES,
    results: [pkg('unmet'), pkg(), node(), worktree()],
    outcome: 'unmet',
    declared: true,
    incomplete: true,
    rows: [pkg('unmet'), node(), worktree(), extra(pkg())],
  },
  'undeclared results before repeated ones among the extras': {
    requires: REQUIRES,
    results: [pkg(), node(), node(), worktree(), result('exec', 'pnpm')],
    outcome: 'unmet',
    declared: true,
    incomplete: true,
    rows: [pkg(), node(), worktree(), extra(result('exec', 'pnpm')), extra(node())],
  },
  'every result, out of declaration order': {
    requires: REQUIRES,
    results: [node(), pkg(), worktree()],
    outcome: 'unmet',
    declared: true,
    incomplete: true,
    rows: [pkg(), node(), worktree()],
  },
  'a definition stored with a repeated requirement, answered once each': {
    requires: { paths: ['package.json', 'package.json'] },
    results: [pkg(), pkg()],
    outcome: 'unmet',
    declared: true,
    incomplete: true,
    rows: [pkg(), missing('paths', 'package.json'), extra(pkg())],
  },
}

describe('judgeReport', () => {
  it.each(Object.entries(table))('%s', (_name, row) => {
    const report = { outcome: row.claimed ?? 'met', results: row.results }
    const judged = judgeReport(row.requires, report)
    expect(judged.outcome).toBe(row.outcome)
    expect(judged.decision).toBe(row.outcome === 'met' ? 'proceed' : 'abort')
    expect(judged.declared).toBe(row.declared)
    if (row.incomplete) expect(judged.reason).toBe('report-incomplete')
    else expect(judged).not.toHaveProperty('reason')
    expect(judged.results).toEqual(row.rows ?? row.results)
  })
})

describe('statusAfter', () => {
  it('runs the dispatch on proceed and fails it as preflight_failed on abort', () => {
    expect(statusAfter('proceed')).toBe('running')
    expect(statusAfter('abort')).toBe('preflight_failed')
  })
})

describe('endingReasons', () => {
  const judge = (results: CheckResult[], claimed: Outcome = 'met') =>
    endingReasons(judgeReport(REQUIRES, { outcome: claimed, results }))

  it('names each reason of the unmet and error results once', () => {
    const gone = { ...worktree('unmet'), reason: 'not-a-worktree' }
    expect(judge([pkg('unmet'), node('unmet'), gone])).toEqual(['not-found', 'not-a-worktree'])
    expect(judge([pkg('error'), node('unmet'), worktree()])).toEqual(['timeout', 'not-found'])
  })

  it('adds the report’s own reason when results are missing or out of order', () => {
    expect(judge([node(), pkg(), worktree()])).toEqual(['report-incomplete'])
    expect(judge([pkg('error')])).toEqual(['timeout', 'report-incomplete'])
  })

  it('names no reason a met result carries', () => {
    expect(judge([{ ...pkg(), reason: 'stale' }, node('unmet'), worktree()])).toEqual(['not-found'])
  })

  it('names none for a report that lets the agent start', () => {
    expect(judge([pkg(), node(), worktree()])).toEqual([])
  })

  it('names none for results all met under a claimed error: it aborts without a reason code', () => {
    expect(judge([pkg(), node(), worktree()], 'error')).toEqual([])
  })
})

describe('replay', () => {
  const report: PreflightReport = {
    outcome: 'met',
    declared: true,
    results: [pkg()],
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
  }

  it('gives the same report, whatever its key order, the first answer and the status it set', () => {
    const reordered = JSON.parse(JSON.stringify({ ...report, results: [{ ...pkg() }] })) as PreflightReport
    const shuffled = Object.fromEntries(Object.entries(reordered).reverse()) as PreflightReport
    expect(replay({ report, decision: 'proceed' }, shuffled)).toEqual({
      decision: 'proceed',
      status: 'running',
    })
    expect(replay({ report, decision: 'abort' }, report)).toEqual({
      decision: 'abort',
      status: 'preflight_failed',
    })
  })

  it('gives a different report no answer (a conflict)', () => {
    expect(replay({ report, decision: 'proceed' }, { ...report, results: [pkg('unmet')] })).toBeUndefined()
  })
})
