// The log of the coordinator and the worker: pino records, as JSON lines or in a pretty form for a
// terminal, with secrets redacted from every line and no control character left to drive a terminal.
import { hostname } from 'node:os'
import { pino } from 'pino'
import { colours, wantsColour } from './colour.js'
import { jsonWithoutControls, visible } from './controls.js'
import { gathered } from './gather.js'
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
  // A record whose fields are strings and numbers its caller made and knows to hold nothing to hide and
  // no character to escape (the access log's): the same JSON line as `info(msg, fields)` would write,
  // without the serializer and the redaction's patterns — only the process's own secrets are still
  // looked for. Absent where a log has no such path: the caller writes it with info().
  plain?(level: 'debug' | 'info', msg: string, fields: Record<string, string | number | undefined>): void
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
  // JSON lines to the process's own stderr off a terminal (a container's log, a pipe, a file) are
  // gathered; a person at a terminal, and a caller's stream, get each line as it is made
  const out =
    opts.stream === undefined && opts.format !== 'pretty' && !stream.isTTY ? gathered(stream) : undefined
  const put = out ? out.write : (line: string) => stream.write(line)
  const write =
    opts.format === 'pretty'
      ? (line: string) => stream.write(pretty(redact(line), paint))
      : (line: string) => put(jsonWithoutControls(redact(line)))
  const logger = pino(
    {
      name: opts.name,
      level: opts.level ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  )
  const log = wrap(logger, out?.flush)
  if (opts.format === 'pretty') return log
  // pino's own line: level, time, pid, hostname, name, the fields, msg
  const head = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"name":${JSON.stringify(opts.name)}`
  log.plain = (level, msg, fields) => {
    if (!logger.isLevelEnabled(level)) return
    let line = `{"level":"${level}","time":"${new Date().toISOString()}"${head}`
    for (const key in fields) {
      const value = fields[key]
      // pino leaves an undefined field out
      if (value !== undefined) line += `,${JSON.stringify(key)}:${JSON.stringify(value)}`
    }
    put(jsonWithoutControls(redact.known(`${line},"msg":${JSON.stringify(msg)}}\n`)))
  }
  return log
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

// `flush`: lines gathered are written at once after a warning or an error.
function wrap(logger: pino.Logger, flush?: () => void): Log {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (msg: string, fields?: Fields): void =>
      fields ? logger[level](fields, msg) : logger[level](msg)
  const now = (level: 'warn' | 'error') => {
    const write = at(level)
    return (msg: string, fields?: Fields): void => {
      write(msg, fields)
      flush?.()
    }
  }
  return {
    debug: at('debug'),
    info: at('info'),
    warn: flush ? now('warn') : at('warn'),
    error: flush ? now('error') : at('error'),
    child: (fields) => wrap(logger.child(fields), flush),
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
