// Text rendering of `preflight dispatches`: a block per listed dispatch saying why it ended, and one
// dispatch in full (its events, report, setup output and completion).
import type { DispatchItem, DispatchView } from '../contract/index.js'
import { visibleLines } from '../log/controls.js'
import { formatResult } from './reports-format.js'

// Lines of a setup's output shown under a listed dispatch; `show` prints the whole stored tail.
const TAIL_LINES = 3

export function formatItems(items: readonly DispatchItem[]): string {
  if (items.length === 0) return 'no dispatches match\n'
  return items.map((item) => formatItem(item)).join('')
}

// A header line (when: created, or ended for `watch`), then why it ended, indented.
export function formatItem(item: DispatchItem, when: 'created' | 'ended' = 'created'): string {
  const head = [
    (when === 'ended' ? item.endedAt : null) ?? item.createdAt,
    item.status,
    `${item.subagent.name} v${item.subagent.version}`,
    `dispatch ${item.id}`,
    `attempt ${item.attempt}/${item.maxAttempts}`,
    ...(item.workerId === null ? [] : [`worker ${item.workerId}`]),
  ].join('  ')
  return visibleLines(
    `${head}\n${whyLines(item)
      .map((line) => `  ${line}\n`)
      .join('')}`,
  )
}

function whyLines(item: DispatchItem): string[] {
  if (item.setup) {
    const exit = item.setup.exitCode === undefined ? '' : ` (exit ${item.setup.exitCode})`
    return [`setup ${item.setup.reason}${exit}`, ...tail(item.setup.outputTail, TAIL_LINES)]
  }
  if (item.preflight) {
    const { failed, failedCount, outcome, reason } = item.preflight
    const lines = failed.map(
      (r) => `${r.status.padEnd(5)}  ${r.kind} ${r.requirement}${r.reason ? ` — ${r.reason}` : ''}`,
    )
    if (failedCount > failed.length) lines.push(`… ${failedCount - failed.length} more`)
    if (lines.length === 0) lines.push(`preflight ${outcome}${reason ? ` — ${reason}` : ''}`)
    return lines
  }
  if (item.fault) return [`fault in attempt ${item.fault.attempt} at ${item.fault.at}: ${item.fault.message}`]
  if (item.status === 'expired') return ['no lease was renewed; no worker posted a fault']
  if (item.exitCode !== undefined) return [`agent exited ${item.exitCode}`]
  return []
}

// The last `n` non-empty lines of an output, each behind a bar.
function tail(output: string | undefined, n: number): string[] {
  if (!output) return []
  const lines = output.split('\n').filter((line) => line.trim() !== '')
  return lines.slice(-n).map((line) => `| ${line}`)
}

export function formatDispatch(view: DispatchView): string {
  const where =
    view.workspace.path ?? `${view.workspace.repo ?? ''}${view.workspace.ref ? `@${view.workspace.ref}` : ''}`
  const out = [
    `dispatch ${view.id}  ${view.status}  ${view.subagent.name} v${view.subagent.version}  attempt ${view.attempt}/${view.maxAttempts}`,
    `workspace ${where}${view.labels?.length ? `  labels ${view.labels.join(' ')}` : ''}`,
    `created ${view.createdAt}  updated ${view.updatedAt}${view.priority ? `  priority ${view.priority}` : ''}`,
    ...(view.metadata ? [`metadata ${metadataText(view.metadata)}`] : []),
    '',
    `events${view.eventCount > view.events.length ? ` (the last ${view.events.length} of ${view.eventCount})` : ''}`,
    ...view.events.map((e) => `  ${e.at}  #${e.attempt}  ${e.step}${detailOf(e.detail)}`),
  ]
  if (view.preflight) {
    const p = view.preflight
    out.push(
      '',
      `preflight (attempt ${p.attempt}): ${p.outcome}, ${p.decision}${p.reason ? ` — ${p.reason}` : ''}`,
    )
    const ordered = [...p.results].sort((a, b) => rank(a.status) - rank(b.status))
    out.push(...ordered.map((r) => `  ${formatResult(r)}`))
  }
  if (view.completion) {
    const c = view.completion
    const facts = [
      c.status,
      ...(c.reason ? [`reason ${c.reason}`] : []),
      ...(c.exitCode === undefined ? [] : [`exit ${c.exitCode}`]),
      ...(c.durationMs === undefined ? [] : [`${Math.round(c.durationMs)} ms`]),
      `at ${c.at}`,
    ]
    out.push('', `completion: ${facts.join(', ')}`)
    if (c.detail)
      out.push('output (its tail):', ...tail(c.detail, Number.POSITIVE_INFINITY).map((l) => `  ${l}`))
  }
  return visibleLines(`${out.join('\n')}\n`)
}

// key=value pairs, each quoted when it holds a space (as --metadata takes them)
export const metadataText = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => (/[\s"]/.test(v) ? `${k}=${JSON.stringify(v)}` : `${k}=${v}`))
    .join(' ')

// unmet first, then error, then met: what an operator acts on first
const rank = (status: string) => (status === 'unmet' ? 0 : status === 'error' ? 1 : 2)

// An event's detail on one line: its fields as `key value`, long ones cut.
function detailOf(detail: unknown): string {
  if (detail === undefined || detail === null) return ''
  if (typeof detail !== 'object') return `  ${String(detail)}`
  const parts = Object.entries(detail as Record<string, unknown>).map(([key, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    const line =
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .at(-1) ?? ''
    return `${key} ${line.length > 120 ? `${line.slice(0, 117)}…` : line}`
  })
  return parts.length === 0 ? '' : `  ${parts.join('; ')}`
}
