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

export const isFinal = (status: string): boolean => FINAL_STATUSES.has(status as DispatchStatus)
