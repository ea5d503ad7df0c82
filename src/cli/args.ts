// What the subcommands share in reading their flags' values (main.ts parses the command line).
import { UsageError } from './errors.js'

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
