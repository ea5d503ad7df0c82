// What the subcommands share in reading their flags' values (main.ts parses the command line).
import { DURATION_FORMS, formatDuration, parseDuration } from './duration.js'
import { UsageError } from './errors.js'

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

// One line on stderr for people; stdout stays for what a command outputs.
export const say = (line: string) => process.stderr.write(`preflight: ${line}\n`)

// --coordinator, else PREFLIGHT_COORDINATOR, else PREFLIGHT_URL: an http(s) URL.
export function coordinatorUrl(flag: string | undefined): URL {
  const given = setting('coordinator', flag, ['PREFLIGHT_COORDINATOR', 'PREFLIGHT_URL'])
  if (!given) throw new UsageError('name the coordinator with --coordinator URL or PREFLIGHT_COORDINATOR')
  try {
    const url = new URL(given.value)
    if (url.protocol === 'http:' || url.protocol === 'https:') return url
  } catch {}
  throw new UsageError(`${given.name} must be an http(s) URL, got "${given.value}"`)
}

// --token, else PREFLIGHT_TOKEN; `role` names the token's role in the error.
export function tokenFrom(flag: string | undefined, role: string): string {
  const value = flag ?? process.env.PREFLIGHT_TOKEN
  if (!value) throw new UsageError(`give ${role} token with --token T or PREFLIGHT_TOKEN`)
  return value
}
