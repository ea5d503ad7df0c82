// Text rendering of `preflight dispatches`: a block per listed dispatch saying why it ended, and one
// dispatch in full (its events, report, setup output and completion). What the coordinator sent is made
// visible piece by piece (log/controls.ts) and only the status words are painted (paint.ts).
import { type DispatchItem, type DispatchView, undeclaredText } from '../contract/index.js'
import { visible } from '../log/controls.js'
import { type Colours, PLAIN, statusWord } from './paint.js'
import { formatResult } from './reports-format.js'

// Lines of a setup's output shown under a listed dispatch; `show` prints the whole stored tail.
const TAIL_LINES = 3

export function formatItems(items: readonly DispatchItem[], c: Colours = PLAIN): string {
  if (items.length === 0) return 'no dispatches match\n'
  return items.map((item) => formatItem(item, 'created', c)).join('')
}

// A header line (when: created, or ended for `watch`), then why it ended, indented.
export function formatItem(item: DispatchItem, when: 'created' | 'ended' = 'created', c = PLAIN): string {
  const head = [
    visible((when === 'ended' ? item.endedAt : null) ?? item.createdAt),
    statusWord(c, item.status),
    visible(`${item.subagent.name} v${item.subagent.version}`),
    visible(`dispatch ${item.id}`),
    `attempt ${item.attempt}/${item.maxAttempts}`,
    ...(item.workerId === null ? [] : [visible(`worker ${item.workerId}`)]),
  ].join('  ')
  return `${head}\n${whyLines(item, c)
    .map((line) => `  ${line}\n`)
    .join('')}`
}

// Each line made visible; a requirement's status painted.
function whyLines(item: DispatchItem, c: Colours): string[] {
  if (item.setup) {
    const exit = item.setup.exitCode === undefined ? '' : ` (exit ${item.setup.exitCode})`
    return [visible(`setup ${item.setup.reason}${exit}`), ...tail(item.setup.outputTail, TAIL_LINES)]
  }
  if (item.preflight) {
    const { failed, failedCount, outcome, reason } = item.preflight
    const lines = failed.map(
      (r) =>
        `${statusWord(c, r.status, 5)}  ${visible(`${r.kind} ${r.requirement}${r.reason ? ` — ${r.reason}` : ''}`)}`,
    )
    if (failedCount > failed.length) lines.push(`… ${failedCount - failed.length} more`)
    if (lines.length === 0)
      lines.push(`preflight ${statusWord(c, outcome)}${reason ? visible(` — ${reason}`) : ''}`)
    return lines
  }
  if (item.fault)
    return [visible(`fault in attempt ${item.fault.attempt} at ${item.fault.at}: ${item.fault.message}`)]
  if (item.status === 'expired') return ['no lease was renewed; no worker posted a fault']
  if (item.exitCode !== undefined) return [`agent exited ${item.exitCode}`]
  return []
}

// The last `n` non-empty lines of an output, each behind a bar, made visible.
function tail(output: string | undefined, n: number): string[] {
  if (!output) return []
  const lines = output.split('\n').filter((line) => line.trim() !== '')
  return lines.slice(-n).map((line) => visible(`| ${line}`))
}

export function formatDispatch(view: DispatchView, c: Colours = PLAIN): string {
  const where =
    view.workspace.path ?? `${view.workspace.repo ?? ''}${view.workspace.ref ? `@${view.workspace.ref}` : ''}`
  const out = [
    `${visible(`dispatch ${view.id}`)}  ${statusWord(c, view.status)}  ${visible(`${view.subagent.name} v${view.subagent.version}`)}  attempt ${view.attempt}/${view.maxAttempts}`,
    visible(`workspace ${where}${view.labels?.length ? `  labels ${view.labels.join(' ')}` : ''}`),
    visible(
      `created ${view.createdAt}  updated ${view.updatedAt}${view.priority ? `  priority ${view.priority}` : ''}`,
    ),
    ...(view.metadata ? [visible(`metadata ${metadataText(view.metadata)}`)] : []),
    '',
    `events${view.eventCount > view.events.length ? ` (the last ${view.events.length} of ${view.eventCount})` : ''}`,
    ...view.events.map((e) => visible(`  ${e.at}  #${e.attempt}  ${e.step}${detailOf(e.detail)}`)),
  ]
  if (view.preflight) {
    const p = view.preflight
    out.push(
      '',
      `preflight (attempt ${p.attempt}): ${statusWord(c, p.outcome)}, ${visible(`${p.decision}${p.reason ? ` — ${p.reason}` : ''}`)}`,
    )
    const ordered = [...p.results].sort((a, b) => rank(a.status) - rank(b.status))
    for (const r of ordered) {
      out.push(`  ${formatResult(r, c)}`)
      // in full: the PATH an exec requirement that was not met was looked for in, every directory of it
      const searched = r.status === 'met' ? undefined : (r.observed as { searched?: unknown }).searched
      if (Array.isArray(searched) && searched.length > 0)
        out.push(visible(`    searched ${searched.map(String).join(':')}`))
    }
  }
  if (view.completion) {
    const done = view.completion
    const facts = [
      ...(done.reason ? [`reason ${done.reason}`] : []),
      ...(done.exitCode === undefined ? [] : [`exit ${done.exitCode}`]),
      ...(done.durationMs === undefined ? [] : [`${Math.round(done.durationMs)} ms`]),
      `at ${done.at}`,
    ]
    out.push('', `completion: ${statusWord(c, done.status)}, ${visible(facts.join(', '))}`)
    if (done.undeclared?.length) {
      const from = done.observed?.source === 'output' ? ' (read from the output: the agent’s own word)' : ''
      out.push(`used, and declared by no requirement${from}:`)
      for (const need of done.undeclared) out.push(visible(`  ${undeclaredText(need)}`))
    }
    if (done.detail)
      out.push('output (its tail):', ...tail(done.detail, Number.POSITIVE_INFINITY).map((l) => `  ${l}`))
  }
  return `${out.join('\n')}\n`
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
