// `preflight check --format junit`: one <testcase> per requirement, <failure> for unmet, <error> for
// error, counted on the <testsuite>; valid against both schemas CI tools read it by, Ant's
// (JUnitReport's aggregate form) and Jenkins' (test/cli/fixtures/).
import { hostname } from 'node:os'
import type { CheckReport, CheckResult } from '../contract/index.js'
import { why } from './check-why.js'

export function junit(report: CheckReport, host: string = hostname()): string {
  const count = (status: CheckResult['status']) => report.results.filter((r) => r.status === status).length
  const suite = {
    name: report.workspace,
    tests: report.results.length,
    failures: count('unmet'),
    errors: count('error'),
    skipped: 0,
    time: seconds(Date.parse(report.finishedAt) - Date.parse(report.startedAt)),
    // Ant's schema takes a time without a zone; it is UTC
    timestamp: report.startedAt.slice(0, 19),
    hostname: host || 'localhost',
    id: 0,
    package: 'preflight',
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    // Ant's schema allows no attribute on <testsuites>: the counts are the suite's
    '<testsuites>',
    `  <testsuite ${attributes(suite)}>`,
    '    <properties>',
    `      <property name="workspace" value="${xml(report.workspace)}"/>`,
    `      <property name="outcome" value="${report.outcome}"/>`,
    '    </properties>',
    ...report.results.map(testcase),
    '    <system-out/>',
    '    <system-err/>',
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}

function testcase(r: CheckResult): string {
  const open = `    <testcase ${attributes({ name: r.requirement, classname: `preflight.${r.kind}`, time: seconds(r.durationMs) })}`
  if (r.status === 'met') return `${open}/>`
  // unmet: the requirement was decided and does not hold; error: it could not be decided
  const element = r.status === 'unmet' ? 'failure' : 'error'
  const detail = attributes({ message: `${r.status}: ${why(r)}`, type: r.reason ?? r.status })
  return [
    `${open}>`,
    `      <${element} ${detail}>${xml(JSON.stringify(r.observed))}</${element}>`,
    '    </testcase>',
  ].join('\n')
}

function attributes(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([name, value]) => `${name}="${xml(String(value))}"`)
    .join(' ')
}

function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3)
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
