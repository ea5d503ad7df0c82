// `preflight explain REASON` — what a reason code (or a dispatch status) means and what to look at,
// from the entries docs/troubleshooting.md is checked against. An unknown code is exit 2, one line
// naming the codes nearest to it.

import { type Entry, TROUBLESHOOTING } from '../contract/troubleshooting.js'
import { UsageError } from './errors.js'
import { nearest } from './nearest.js'

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
