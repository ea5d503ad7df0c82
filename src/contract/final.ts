// The statuses a dispatch ends in: nothing changes it afterwards. Without zod, so that the client (and
// anything else that only waits for an end) can import it without loading the schemas.
import type { DispatchStatus } from './api.js'

export const FINAL_STATUSES: ReadonlySet<DispatchStatus> = new Set([
  'setup_failed',
  'preflight_failed',
  'succeeded',
  'failed',
  'expired',
  'cancelled',
])

// The statuses a dispatch fails in, in the order of its life: what the failure listings show.
export const FAILURE_STATUSES = [
  'setup_failed',
  'preflight_failed',
  'failed',
  'expired',
] as const satisfies readonly DispatchStatus[]

export const isFinal = (status: string): boolean => FINAL_STATUSES.has(status as DispatchStatus)
