// The pretty form of a log record, for a person at a terminal: `12:34:56.789 INFO  message  key=value`,
// and a line of a workspace program's output as `[dispatch step] line`, as the worker printed it before.
// Every piece of the record is shown with its control characters as visible escapes (controls.ts):
// what an agent prints must not move the cursor, erase lines or set the terminal's title.
import type { Colours } from './colour.js'
import { visible, visibleLines } from './controls.js'

type Record_ = Record<string, unknown>

// Shown in the line's head, or said by the terminal itself (one process, one host).
const HEAD = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'output', 'err'])

export function prettyRecord(record: Record_, c: Colours): string {
  const msg = visible(String(record.msg ?? ''))
  if (record.output === true) return `${c.dim(`[${visible(outputSource(record))}]`)} ${msg}\n`
  const time = typeof record.time === 'string' ? visible(record.time.slice(11, 23)) : ''
  const level = visible(String(record.level ?? ''))
  const fields = Object.entries(record)
    .filter(([key]) => !HEAD.has(key))
    .map(([key, value]) => `${key}=${fieldValue(value)}`)
  const err = errorOf(record.err)
  return [
    `${c.dim(time)} ${paint(level, c)} ${msg}`,
    fields.length > 0 ? `  ${c.dim(visible(fields.join(' ')))}` : '',
    err ? `\n  ${err}` : '',
    '\n',
  ].join('')
}

function outputSource(record: Record_): string {
  const id = typeof record.dispatchId === 'string' ? record.dispatchId.slice(0, 8) : '-'
  return typeof record.step === 'string' ? `${id} ${record.step}` : id
}

function paint(level: string, c: Colours): string {
  const label = level.toUpperCase().padEnd(5)
  if (level === 'error' || level === 'fatal') return c.red(c.bold(label))
  if (level === 'warn') return c.yellow(label)
  if (level === 'info') return c.green(label)
  return c.dim(label)
}

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  return JSON.stringify(value) ?? String(value)
}

// pino's err serializer: { type, message, stack }; the stack says the message again on its first line.
function errorOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const { stack, message } = err as { stack?: unknown; message?: unknown }
  const text = typeof stack === 'string' ? stack : typeof message === 'string' ? message : undefined
  // the stack's own line breaks are kept, indented; within a line, controls are escaped as anywhere
  return text === undefined ? undefined : visibleLines(text, '\n  ')
}
