// Renders a `preflight check` report as text (unmet and error first, coloured on a terminal), JSON (the
// contract's CheckReport: schemas/check-report.schema.json) or JUnit XML (check-junit.ts).
import type { CheckReport, CheckResult } from '../contract/index.js'
import { type Colours, colours } from '../log/colour.js'
import { junit } from './check-junit.js'
import { why } from './check-why.js'

export const FORMATS = ['text', 'json', 'junit'] as const
export type Format = (typeof FORMATS)[number]

// `note`: a last line of the text report (json and junit carry the report alone).
export function render(
  report: CheckReport,
  format: Format,
  opts: { colour?: boolean; note?: string | undefined } = {},
): string {
  if (format === 'json') return `${JSON.stringify(jsonShape(report), null, 2)}\n`
  if (format === 'junit') return junit(report)
  const c = colours(opts.colour ?? false)
  return `${text(report, c)}${opts.note ? `${c.dim(opts.note)}\n` : ''}`
}

function jsonShape(r: CheckReport): CheckReport {
  return {
    outcome: r.outcome,
    declared: r.declared,
    workspace: r.workspace,
    results: r.results,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
  }
}

const ORDER = { unmet: 0, error: 1, met: 2 } as const

function text(report: CheckReport, c: Colours): string {
  const paint = { met: c.green, unmet: c.red, error: c.yellow }
  const sorted = [...report.results].sort((a, b) => ORDER[a.status] - ORDER[b.status])
  const width = Math.min(40, Math.max(0, ...sorted.map((r) => r.requirement.length)))
  const lines = sorted.map(
    (r) =>
      `${paint[r.status](r.status.padEnd(5))}  ${r.kind.padEnd(5)}  ${r.requirement.padEnd(width)}  ${c.dim(why(r))}`,
  )
  const count = (s: CheckResult['status']) => report.results.filter((r) => r.status === s).length
  const summary = report.declared
    ? `${c.bold(paint[report.outcome](report.outcome))}: ${count('met')} met, ${count('unmet')} unmet, ${count('error')} error in ${report.workspace}`
    : `${c.bold(c.green('met'))}: no requirements declared for ${report.workspace}`
  return `${[...lines, summary].join('\n')}\n`
}
