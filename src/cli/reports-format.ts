// Text rendering of `preflight reports`: one block per report, naming each unmet/error requirement
// and what the worker observed. What the worker reported is made visible piece by piece
// (log/controls.ts); only the outcome and status words are painted (paint.ts).
import type { CheckResult, ReportItem } from '../contract/index.js'
import { visible } from '../log/controls.js'
import { type Colours, PLAIN, paintStatus, statusWord } from './paint.js'

const MAX_LIST = 5

export function formatReports(items: readonly ReportItem[], c: Colours = PLAIN): string {
  if (items.length === 0) return 'no reports match\n'
  return `${items.map((item) => formatReport(item, c)).join('\n')}\n`
}

export function formatReport(item: ReportItem, c: Colours = PLAIN): string {
  const head = [
    visible(item.createdAt),
    visible(`${item.subagent} v${item.subagentVersion}`),
    paintStatus(c, item.outcome, visible(item.outcome.toUpperCase())),
    visible(`dispatch ${item.dispatchId}`),
    `attempt ${item.attempt}`,
    visible(`worker ${item.workerId}`),
  ].join('  ')
  const failed = item.results.filter((r) => r.status !== 'met')
  if (item.results.length === 0) return `${head}\n  no requirements declared\n`
  if (failed.length === 0) return `${head}\n  all ${item.results.length} requirements met\n`
  // unmet before error: "decided, does not hold" is what an operator acts on first
  const ordered = [...failed].sort((a, b) => rank(a) - rank(b))
  return `${head}\n${ordered.map((r) => `  ${formatResult(r, c)}\n`).join('')}`
}

const rank = (r: CheckResult) => (r.status === 'unmet' ? 0 : 1)

// One result on one line: its status painted, the rest made visible.
export function formatResult(r: CheckResult, c: Colours = PLAIN): string {
  const why = r.reason ? ` — ${r.reason}` : ''
  const seen = formatObserved(r.observed)
  return `${statusWord(c, r.status, 5)}  ${visible(`${r.kind} ${r.requirement}${why}${seen ? `; ${seen}` : ''}`)}`
}

// Renders observed facts compactly: lists joined, rejected candidates as "path (why)".
function formatObserved(observed: Record<string, unknown>): string {
  return Object.entries(observed)
    .filter(([key]) => key !== 'name')
    .map(([key, value]) => `${key} ${formatValue(value)}`)
    .join('; ')
}

function formatValue(value: unknown): string {
  if (!Array.isArray(value)) return typeof value === 'string' ? value : JSON.stringify(value)
  if (value.length === 0) return 'none'
  const shown = value.slice(0, MAX_LIST).map(formatEntry)
  const more = value.length > MAX_LIST ? `, … ${value.length - MAX_LIST} more` : ''
  return `${shown.join(', ')}${more}`
}

function formatEntry(entry: unknown): string {
  if (typeof entry === 'string') return entry
  const e = entry as { path?: unknown; why?: unknown }
  if (typeof e?.path === 'string' && typeof e.why === 'string') return `${e.path} (${e.why})`
  return JSON.stringify(entry)
}
