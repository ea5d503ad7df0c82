// Argument parsing shared by the subcommands: node:util parseArgs, with its errors turned into UsageError.
import { type ParseArgsConfig, parseArgs } from 'node:util'
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
