// The log flags of the commands that run as a service (coordinator, worker).
import { defaultFormat, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log/log.js'
import { type Setting, settingOf } from './args.js'
import { UsageError } from './errors.js'
import { LOG_FLAGS } from './flags.js'

// --log-level, else PREFLIGHT_LOG_LEVEL, else info; --log-format, else PREFLIGHT_LOG_FORMAT, else pretty
// when stdout and stderr are terminals and JSON lines otherwise.
export function logOptions(values: { 'log-level'?: string; 'log-format'?: string }): {
  level: LogLevel
  format: LogFormat
} {
  return {
    level: oneOf(settingOf(LOG_FLAGS, 'log-level', values), LOG_LEVELS) ?? 'info',
    format: oneOf(settingOf(LOG_FLAGS, 'log-format', values), LOG_FORMATS) ?? defaultFormat(),
  }
}

function oneOf<T extends string>(given: Setting | undefined, allowed: readonly T[]): T | undefined {
  if (given === undefined) return undefined
  if ((allowed as readonly string[]).includes(given.value)) return given.value as T
  throw new UsageError(`${given.name} must be one of ${allowed.join(', ')}, got "${given.value}"`)
}
