// Argument parsing shared by the subcommands: node:util parseArgs, with its errors turned into UsageError.
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { defaultFormat, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log/log.js'
import { UsageError } from './errors.js'

type Options = NonNullable<ParseArgsConfig['options']>

export function parseFlags<T extends Options>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals })
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message.replace(/\.\s.*$/s, '') : String(err))
  }
}

export function intFlag(
  value: string | undefined,
  name: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`)
  }
  return n
}

// One line on stderr for people; stdout stays for what a command outputs.
export const say = (line: string) => process.stderr.write(`preflight: ${line}\n`)

// --coordinator, else PREFLIGHT_COORDINATOR, else PREFLIGHT_URL: an http(s) URL.
export function coordinatorUrl(flag: string | undefined): URL {
  const value = flag ?? process.env.PREFLIGHT_COORDINATOR ?? process.env.PREFLIGHT_URL
  if (!value) throw new UsageError('name the coordinator with --coordinator URL or PREFLIGHT_COORDINATOR')
  try {
    const url = new URL(value)
    if (url.protocol === 'http:' || url.protocol === 'https:') return url
  } catch {}
  throw new UsageError(`--coordinator must be an http(s) URL, got "${value}"`)
}

// --token, else PREFLIGHT_TOKEN; `role` names the token's role in the error.
export function tokenFrom(flag: string | undefined, role: string): string {
  const value = flag ?? process.env.PREFLIGHT_TOKEN
  if (!value) throw new UsageError(`give ${role} token with --token T or PREFLIGHT_TOKEN`)
  return value
}

// The flags of a command that runs as a service (coordinator, worker) and logs.
export const logFlags = {
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
} as const

// --log-level, else PREFLIGHT_LOG_LEVEL, else info; --log-format, else PREFLIGHT_LOG_FORMAT, else pretty
// when stdout and stderr are terminals and JSON lines otherwise.
export function logOptions(values: { 'log-level'?: string; 'log-format'?: string }): {
  level: LogLevel
  format: LogFormat
} {
  const env = process.env
  return {
    level:
      oneOf('log-level', values['log-level'] ?? (env.PREFLIGHT_LOG_LEVEL || undefined), LOG_LEVELS) ?? 'info',
    format:
      oneOf('log-format', values['log-format'] ?? (env.PREFLIGHT_LOG_FORMAT || undefined), LOG_FORMATS) ??
      defaultFormat(),
  }
}

function oneOf<T extends string>(
  name: string,
  value: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (value === undefined) return undefined
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got "${value}"`)
}
