// Free JSON the worker sent — what a check observed, an event's detail — written for people, as the CLI
// prints it: fields by name, lists as lists, a rejected candidate as its path and why, a command as the
// command line, nothing as "none". No raw JSON but for a shape nothing here knows.
import type { Child } from 'hono/jsx'
import { Code, duration } from './layout.js'

// Field names as words (a field not named here keeps its own name).
const FIELD: Record<string, string> = {
  searched: 'PATH searched',
  rejected: 'rejected candidates',
  entriesScanned: 'entries scanned',
  realpath: 'real path',
  toplevel: 'worktree',
  workerId: 'worker',
  retryOf: 'retry of',
  exitCode: 'exit code',
  timeoutMs: 'time limit',
  durationMs: 'took',
}

// Why a candidate a check saw did not count (the contract's Rejection codes).
const REJECTION: Record<string, string> = {
  unreachable: "the agent's user cannot reach or run it",
  'not-executable': 'not executable',
  directory: 'a directory',
  'dangling-symlink': 'a symlink to nothing',
  'symlink-escapes-workspace': 'a symlink out of the workspace',
}

// Fields of an object as a list of facts; `skip` leaves some out (shown elsewhere).
export function Fields({ value, skip = [] }: { value: Record<string, unknown>; skip?: readonly string[] }) {
  const entries = Object.entries(value).filter(([key]) => !skip.includes(key))
  if (entries.length === 0) return <span class="note">nothing</span>
  return (
    <dl class="facts">
      {entries.map(([key, v]) => (
        <>
          <dt>{FIELD[key] ?? key}</dt>
          <dd>{fieldValue(key, v)}</dd>
        </>
      ))}
    </dl>
  )
}

function fieldValue(key: string, v: unknown): Child {
  // a setup step that ran nothing says so with a null command
  if (key === 'command' && v === null)
    return <span class="note">none (no workspace.setup, no preflight-setup.sh)</span>
  if (v === null || v === undefined) return <span class="note">none</span>
  if (key === 'command' && isArgv(v)) return <code>{argvText(v)}</code>
  if (key === 'retryOf' && typeof v === 'string') return <a href={`/ui/dispatches/${v}`}>{v}</a>
  if (key === 'reason' && typeof v === 'string') return <Code code={v} />
  if ((key === 'timeoutMs' || key === 'durationMs') && typeof v === 'number') return duration(v)
  if (key === 'by' && isWho(v)) return who(v)
  return plain(v)
}

function plain(v: unknown): Child {
  if (v === null || v === undefined) return <span class="note">none</span>
  if (typeof v === 'string') return <code>{v}</code>
  if (typeof v === 'boolean') return v ? 'yes' : 'no'
  if (typeof v === 'number') return String(v)
  if (Array.isArray(v)) {
    if (v.length === 0) return <span class="note">none</span>
    return (
      <ul class="plain">
        {v.map((item) => (
          <li>{isRejected(item) ? <Rejected r={item} /> : plain(item)}</li>
        ))}
      </ul>
    )
  }
  if (typeof v === 'object') return <Fields value={v as Record<string, unknown>} />
  return <code>{JSON.stringify(v)}</code>
}

type Rejected = { path: string; why?: unknown }
const isRejected = (v: unknown): v is Rejected =>
  typeof v === 'object' && v !== null && typeof (v as Rejected).path === 'string'

function Rejected({ r }: { r: Rejected }) {
  const why = typeof r.why === 'string' ? r.why : undefined
  return (
    <>
      <code>{r.path}</code>
      {why && (
        <>
          {' '}
          — {REJECTION[why] ?? why} (<code>{why}</code>)
        </>
      )}
    </>
  )
}

const isArgv = (v: unknown): v is string[] => Array.isArray(v) && v.every((a) => typeof a === 'string')

// A command line: each argument as it is, quoted when it holds a space or a quote.
export const argvText = (argv: readonly string[]) =>
  argv.map((a) => (a === '' || /[\s"'\\]/.test(a) ? JSON.stringify(a) : a)).join(' ')

type Who = { tokenId: number | null; role: string }
const isWho = (v: unknown): v is Who => typeof v === 'object' && v !== null && 'role' in v

// Who did it: the role and id of the token.
export const who = (by: Who) => `${by.role} token ${by.tokenId === null ? '(id not recorded)' : by.tokenId}`
