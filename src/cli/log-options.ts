// The log flags of the commands that run as a service (coordinator, worker).
import { defaultFormat, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log/log.js'
import { UsageError } from './errors.js'

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
