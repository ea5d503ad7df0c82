// What the subcommands share in reading their flags' values (main.ts parses the command line).

import { DURATION_FORMS, formatDuration, parseDuration } from './duration.js'
import { UsageError } from './errors.js'
import { API_FLAGS, type Flags, type Values } from './flags.js'

// A value and where it came from, by the name an error about it gives: "--lease-ms" when the flag
// was given, "PREFLIGHT_LEASE_MS" when the variable was read instead. An error names what the user
// wrote, never a flag they did not give.
export interface Setting {
  value: string
  name: string
}

// --flag's value when given, else the first of `vars` that is set; an empty variable counts as unset
// (compose's `X: ${X:-}` passes one).
export function setting(flag: string, value: string | undefined, vars: string[] = []): Setting | undefined {
  if (value !== undefined) return { value, name: `--${flag}` }
  for (const name of vars) {
    const fromEnv = process.env[name]
    if (fromEnv) return { value: fromEnv, name }
  }
  return undefined
}

// The flag's value, else the first set variable of its `env` in the command's table (commands.ts): the
// variables the help names are the ones read.
export function settingOf<F extends Flags>(
  flags: F,
  flag: keyof F & string,
  values: Values<F>,
): Setting | undefined {
  const value = values[flag]
  return setting(flag, typeof value === 'string' ? value : undefined, [...(flags[flag]?.env ?? [])])
}

export function intSetting(given: Setting | undefined, min: number, max: number): number | undefined {
  if (given === undefined) return undefined
  const n = Number(given.value)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`${given.name} must be a whole number from ${min} to ${max}, got "${given.value}"`)
  }
  return n
}

// A duration in milliseconds (duration.ts: 250ms, 60s, 5m, 1h, or a bare number of ms) from min to max.
export function durationSetting(given: Setting | undefined, min: number, max: number): number | undefined {
  if (given === undefined) return undefined
  const ms = parseDuration(given.value)
  if (ms === undefined || ms < min || ms > max) {
    throw new UsageError(
      `${given.name} must be a duration from ${formatDuration(min)} to ${formatDuration(max)} ` +
        `(milliseconds, or with a unit: ${DURATION_FORMS}), got "${given.value}"`,
    )
  }
  return ms
}

export const intFlag = (value: string | undefined, flag: string, min: number, max: number) =>
  intSetting(setting(flag, value), min, max)

export const durationFlag = (value: string | undefined, flag: string, min: number, max: number) =>
  durationSetting(setting(flag, value), min, max)

// --format of the commands that print text or JSON.
export function formatOf(value: string | undefined): 'text' | 'json' {
  const format = value ?? 'text'
  if (format !== 'text' && format !== 'json')
    throw new UsageError(`--format must be text or json, got "${format}"`)
  return format
}

// One line on stderr for people; stdout stays for what a command outputs.
export const say = (line: string) => process.stderr.write(`preflight: ${line}\n`)

// --coordinator, else PREFLIGHT_COORDINATOR, else PREFLIGHT_URL: an http(s) URL.
export function coordinatorUrl(flag: string | undefined): URL {
  const given = settingOf(API_FLAGS, 'coordinator', { coordinator: flag })
  if (!given) throw new UsageError('name the coordinator with --coordinator URL or PREFLIGHT_COORDINATOR')
  try {
    const url = new URL(given.value)
    if (url.protocol === 'http:' || url.protocol === 'https:') return url
  } catch {}
  throw new UsageError(`${given.name} must be an http(s) URL, got "${given.value}"`)
}

// --token, else PREFLIGHT_TOKEN; `role` names the token's role in the error.
export function tokenFrom(flag: string | undefined, role: string): string {
  const given = settingOf(API_FLAGS, 'token', { token: flag })
  if (!given?.value) throw new UsageError(`give ${role} token with --token T or PREFLIGHT_TOKEN`)
  return given.value
}
