// `preflight explain REASON` — what a reason code (or a dispatch status) means and what to look at,
// from the entries docs/troubleshooting.md is checked against. An unknown code is exit 2, one line
// naming the codes nearest to it.
import { UsageError } from './errors.js'
import { type Entry, TROUBLESHOOTING } from './troubleshooting.js'

const WIDTH = 100

export async function run(code: string): Promise<number> {
  const entry = TROUBLESHOOTING[code]
  if (!entry) throw new UsageError(unknown(code))
  process.stdout.write(formatEntry(code, entry))
  return 0
}

const WHERE: Record<Entry['seen'], (e: Entry) => string> = {
  unmet: (e) =>
    `a result that is unmet (${e.kind === 'any' ? 'any kind' : `${e.kind} requirement`}): the workspace is not as declared`,
  error: () => 'a result that is error: the check could not decide',
  setup_failed: () => 'the reason of a setup_failed dispatch: the workspace never got to the checks',
  expired: () => 'an expired dispatch: its attempts ran out',
  status: () => 'a dispatch status',
}

export function formatEntry(code: string, entry: Entry): string {
  const out = [`${code} — ${WHERE[entry.seen](entry)}`, '', ...wrap(entry.means)]
  if (entry.lookAt) out.push('', 'What to look at:', ...wrap(entry.lookAt))
  return `${out.join('\n')}\n`
}

function unknown(code: string): string {
  const near = nearest(code, Object.keys(TROUBLESHOOTING))
  return near.length > 0
    ? `unknown reason "${code}"; did you mean ${near.join(', ')}?`
    : `unknown reason "${code}"; the reasons are ${Object.keys(TROUBLESHOOTING).join(', ')}`
}

// The codes within a few edits of `code`, or holding it whole (`timeout` → `setup-timeout`), nearest first.
export function nearest(code: string, codes: readonly string[], max = 3): string[] {
  const bound = Math.max(2, Math.floor(code.length / 3))
  return codes
    .map((c) => ({ c, d: c !== code && (c.includes(code) || code.includes(c)) ? 1 : distance(code, c) }))
    .filter(({ d }) => d <= bound)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, max)
    .map(({ c }) => c)
}

// Levenshtein distance: insertions, deletions and substitutions.
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost))
    }
    previous = row
  }
  return previous[b.length] ?? 0
}

function wrap(text: string): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(line)
  return lines
}
