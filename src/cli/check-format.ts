// Renders a `preflight check` report as text (unmet and error first), JSON (the report shape) or JUnit XML.

import type { Verdict } from '../../worker/checks/index.js'
import type { CheckResult } from '../contract/index.js'

export const FORMATS = ['text', 'json', 'junit'] as const
export type Format = (typeof FORMATS)[number]

export type CheckReport = Verdict & { workspace: string }

export function render(report: CheckReport, format: Format): string {
  if (format === 'json') return `${JSON.stringify(jsonShape(report), null, 2)}\n`
  if (format === 'junit') return junit(report)
  return text(report)
}

function jsonShape(r: CheckReport) {
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

function text(report: CheckReport): string {
  const sorted = [...report.results].sort((a, b) => ORDER[a.status] - ORDER[b.status])
  const width = Math.min(40, Math.max(0, ...sorted.map((r) => r.requirement.length)))
  const lines = sorted.map(
    (r) => `${r.status.padEnd(5)}  ${r.kind.padEnd(5)}  ${r.requirement.padEnd(width)}  ${why(r)}`,
  )
  const count = (s: CheckResult['status']) => report.results.filter((r) => r.status === s).length
  const summary = report.declared
    ? `${report.outcome}: ${count('met')} met, ${count('unmet')} unmet, ${count('error')} error in ${report.workspace}`
    : `met: no requirements declared for ${report.workspace}`
  return `${[...lines, summary].join('\n')}\n`
}

// One short phrase from what the check observed.
export function why(r: CheckResult): string {
  const o = r.observed as Record<string, unknown>
  const reason = r.reason ? `${r.reason}: ` : ''
  const rejected =
    Array.isArray(o.rejected) && o.rejected.length > 0 ? `; rejected ${listRejected(o.rejected)}` : ''
  if (r.status === 'error')
    return `${reason}${String(o.message ?? (o.entriesScanned !== undefined ? `${o.entriesScanned} entries scanned` : ''))}`
  if (r.kind === 'paths') {
    return r.status === 'met'
      ? `matched ${String(o.match)}`
      : `${reason}nothing matched (${String(o.entriesScanned)} entries scanned)${rejected}`
  }
  if (r.kind === 'exec') {
    if (r.status === 'met')
      return o.realpath !== o.path ? `${String(o.path)} -> ${String(o.realpath)}` : String(o.path)
    const searched = Array.isArray(o.searched) ? o.searched.length : 0
    return `${reason}${String(o.name)} not found in ${searched} PATH director${searched === 1 ? 'y' : 'ies'}${rejected}`
  }
  return `${reason}toplevel ${String(o.toplevel)}, head ${String(o.head)}${o.shallow ? ', shallow' : ''}`
}

function listRejected(list: unknown[]): string {
  return list
    .map((x) => `${String((x as { path: unknown }).path)} (${String((x as { why: unknown }).why)})`)
    .join(', ')
}

function junit(report: CheckReport): string {
  const failures = report.results.filter((r) => r.status !== 'met').length
  const seconds = (Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000
  const cases = report.results.map((r) => {
    const open = `    <testcase classname="preflight.${r.kind}" name="${xml(r.requirement)}" time="${(r.durationMs / 1000).toFixed(3)}"`
    if (r.status === 'met') return `${open}/>`
    const failure = `      <failure type="${xml(r.reason ?? r.status)}" message="${xml(`${r.status}: ${why(r)}`)}">${xml(JSON.stringify(r.observed))}</failure>`
    return `${open}>\n${failure}\n    </testcase>`
  })
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="preflight" tests="${report.results.length}" failures="${failures}" time="${seconds.toFixed(3)}">`,
    `  <testsuite name="${xml(report.workspace)}" tests="${report.results.length}" failures="${failures}" timestamp="${report.startedAt}" time="${seconds.toFixed(3)}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}

// Attribute- and text-safe; characters XML 1.0 cannot carry at all are dropped.
export function xml(value: string): string {
  return (
    value
      // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping exactly those characters
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  )
}
