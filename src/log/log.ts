// The log of the coordinator and the worker: pino records, as JSON lines or in a pretty form for a
// terminal, with secrets redacted from every line and no control character left to drive a terminal.
import { pino } from 'pino'
import { colours, wantsColour } from './colour.js'
import { jsonWithoutControls, visible } from './controls.js'
import { prettyRecord } from './pretty.js'
import { redactor } from './redact.js'

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_FORMATS = ['json', 'pretty'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export type Fields = Record<string, unknown>

export interface Log {
  debug(msg: string, fields?: Fields): void
  info(msg: string, fields?: Fields): void
  warn(msg: string, fields?: Fields): void
  error(msg: string, fields?: Fields): void
  // the same log with `fields` on every record
  child(fields: Fields): Log
}

// Where lines go: process.stderr, a pipe, a test's PassThrough.
export interface Sink {
  write(line: string): unknown
  isTTY?: boolean
}

export interface LogOptions {
  // what writes: "coordinator" or "worker"
  name: string
  level?: LogLevel
  format?: LogFormat
  stream?: Sink
  // values of this process's secrets (its token, the bootstrap tokens): never written
  secrets?: readonly string[]
  // pretty only; by default when the stream is a terminal (NO_COLOR and FORCE_COLOR honoured)
  colour?: boolean
}

export function createLog(opts: LogOptions): Log {
  const stream = opts.stream ?? process.stderr
  const redact = redactor(opts.secrets)
  const paint = colours(opts.colour ?? wantsColour(stream))
  const write =
    opts.format === 'pretty'
      ? (line: string) => stream.write(pretty(redact(line), paint))
      : (line: string) => stream.write(jsonWithoutControls(redact(line)))
  const logger = pino(
    {
      name: opts.name,
      level: opts.level ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  )
  return wrap(logger)
}

// JSON lines unless both of the process's output streams are terminals: a person is reading.
export function defaultFormat(): LogFormat {
  return process.stdout.isTTY && process.stderr.isTTY ? 'pretty' : 'json'
}

function pretty(line: string, paint: ReturnType<typeof colours>): string {
  try {
    return prettyRecord(JSON.parse(line), paint)
  } catch {
    return `${visible(line.replace(/\n$/, ''))}\n`
  }
}

function wrap(logger: pino.Logger): Log {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (msg: string, fields?: Fields): void =>
      fields ? logger[level](fields, msg) : logger[level](msg)
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => wrap(logger.child(fields)),
  }
}

const ignore = () => {}

// For code whose caller gave no log (tests, library use).
export const silentLog: Log = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  child: () => silentLog,
}
