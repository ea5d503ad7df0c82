// `preflight explain CODE` — what a reason code or a dispatch status means and what to look at: the
// reason codes and the final statuses that carry none from the entries docs/troubleshooting.md is
// checked against, the other statuses from the lifecycle below. An unknown code is exit 2, one line
// naming the codes nearest to it.

import type { DispatchStatus } from '../contract/api.js'
import { SetupReason } from '../contract/reasons.js'
import { type Entry, TROUBLESHOOTING } from '../contract/troubleshooting.js'
import { UsageError } from './errors.js'
import { nearest } from './nearest.js'
import { type Colours, PLAIN, paintStatus, stdoutColours } from './paint.js'

const WIDTH = 100

const codeList = (codes: readonly string[]) => codes.map((c) => `\`${c}\``).join(', ')

// The statuses docs/troubleshooting.md has no row for (a dispatch on its way, or one that succeeded):
// together with its `expired`, `failed` and `cancelled`, every status of the contract.
const LIFECYCLE = {
  queued: {
    seen: 'status',
    means:
      'Waiting for a worker: just created, or handed back after a lease ran out (its attempt count says which). Workers claim the oldest first, by priority, among those their labels allow.',
    lookAt:
      'No worker running, or none with the labels it asks for; a long queue (`preflight dispatches list --status queued`); its deadline, past which it ends `expired` (reason `deadline`).',
  },
  claimed: {
    seen: 'status',
    means:
      'A worker holds its lease and is preparing the workspace (clone or path, setup), then checks its contextRequires. It goes on to `running`, or ends `setup_failed` or `preflight_failed`.',
    lookAt:
      '`preflight dispatches show ID`: its events so far. A worker that died lets the lease run out: the dispatch is queued again, or `expired` after its last attempt.',
  },
  setup_failed: {
    seen: 'status',
    means: `The workspace could not be made ready: no requirement was checked and no agent ran. The completion's setup reason says why: ${codeList([...Object.values(SetupReason), 'deadline'])}.`,
    lookAt:
      '`preflight dispatches show ID`: the reason and the tail of the output; `preflight explain REASON` for that reason.',
  },
  preflight_failed: {
    seen: 'status',
    means:
      "The worker's preflight report said abort: a requirement of the definition's contextRequires was `unmet` or in `error`, so the agent never ran.",
    lookAt:
      '`preflight dispatches show ID`: the results that were not met and their reasons (`preflight explain REASON` for each); `preflight check` on the workspace reproduces them.',
  },
  running: {
    seen: 'status',
    means:
      'Preflight passed and the agent is running; the worker renews its lease while it runs. It ends `succeeded` or `failed`.',
    lookAt:
      "`preflight dispatches wait ID` waits for its end; the worker's `--agent-timeout-ms` and the dispatch's deadline bound it.",
  },
  succeeded: {
    seen: 'status',
    means: 'Preflight passed, the agent ran and exited 0.',
    lookAt: '',
  },
} satisfies Record<Exclude<DispatchStatus, 'expired' | 'failed' | 'cancelled'>, Entry>

// Every code `explain` knows: the reason codes, then the statuses.
export const EXPLAINED: Readonly<Record<string, Entry>> = { ...TROUBLESHOOTING, ...LIFECYCLE }

export async function run(code: string): Promise<number> {
  const entry = Object.hasOwn(EXPLAINED, code) ? EXPLAINED[code] : undefined
  if (!entry) throw new UsageError(unknown(code))
  process.stdout.write(formatEntry(code, entry, stdoutColours()))
  return 0
}

const WHERE: Record<Entry['seen'], (e: Entry) => string> = {
  unmet: (e) =>
    `a result that is unmet (${e.kind === 'any' ? 'any kind' : `${e.kind} requirement`}): the workspace is not as declared`,
  error: () => 'a result that is error: the check could not decide',
  setup_failed: () => 'the reason of a setup_failed dispatch: the workspace never got to the checks',
  expired: () => 'an expired dispatch: its attempts ran out',
  failed: () => 'the reason of a failed dispatch: the agent ran and failed',
  status: () => 'a dispatch status',
}

// The code is painted as what it names: a status as that status, a reason as where it is seen (a reason
// of an unmet result as unmet, of a setup_failed dispatch as setup_failed…).
export function formatEntry(code: string, entry: Entry, c: Colours = PLAIN): string {
  const painted = paintStatus(c, entry.seen === 'status' ? code : entry.seen, code)
  const out = [`${painted} — ${WHERE[entry.seen](entry)}`, '', ...wrap(entry.means)]
  if (entry.lookAt) out.push('', 'What to look at:', ...wrap(entry.lookAt))
  return `${out.join('\n')}\n`
}

function unknown(code: string): string {
  const codes = Object.keys(EXPLAINED)
  const near = nearest(code, codes)
  return near.length > 0
    ? `unknown reason "${code}"; did you mean ${near.join(', ')}?`
    : `unknown reason "${code}"; the reasons and statuses are ${codes.join(', ')}`
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
