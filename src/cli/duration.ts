// Durations on the command line and in the environment: a whole number with a unit (250ms, 60s, 5m, 1h,
// 90d) or, for the flags named `…-ms`, a bare whole number of milliseconds as before.

const UNITS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const
type Unit = keyof typeof UNITS

// The examples an error gives of what is accepted.
export const DURATION_FORMS = '250ms, 60s, 5m, 1h'

// `text` in milliseconds; undefined when it is not a duration. `bare`: a number without a unit is ms
// (the `…-ms` flags); without it a unit is required (`--expires-in 90` could mean any of them).
export function parseDuration(text: string, { bare = true } = {}): number | undefined {
  const match = /^([0-9]{1,16})(ms|s|m|h|d)?$/.exec(text)
  if (!match || (match[2] === undefined && !bare)) return undefined
  const ms = Number(match[1]) * UNITS[(match[2] ?? 'ms') as Unit]
  return Number.isSafeInteger(ms) ? ms : undefined
}

// 86400000 → "1d", 600000 → "10m", 100 → "100ms": the largest unit that says it exactly.
export function formatDuration(ms: number): string {
  if (ms === 0) return '0'
  const units = Object.entries(UNITS).reverse() as [Unit, number][]
  const [unit, size] = units.find(([, size]) => ms % size === 0) ?? ['ms', 1]
  return `${ms / size}${unit}`
}
