// A worker's lifecycle steps as dispatch events: fenced, bounded (EventLimits), and a retry of a stored
// step answered with the stored event.
import type { EventRecorded, Fence } from '../../contract/index.js'
import type { Orm } from '../db/client.js'
import { type AppendRow, appendEvent, type EventLimits } from '../db/events.js'
import { DispatchCode, DispatchError } from './errors.js'
import { fencedWrite, refusal } from './fence.js'

// Appends a worker's step while (attempt, leaseToken) hold a live lease (else not-found / lease-lost).
// A retry of a step whose answer was lost (the same attempt, step and detail as a stored event of that
// attempt) gets the stored event back and stores nothing, also once the limits are reached. Beyond a
// limit: event-limit, nothing stored. Two identical requests racing each other (a retry sent while
// the first is still being written) may both be stored.
export async function appendWorkerEvent(
  db: Orm,
  id: string,
  fence: Fence,
  step: string,
  detail: unknown,
  limits: EventLimits,
): Promise<EventRecorded> {
  const bytes = detail === undefined ? 0 : Buffer.byteLength(JSON.stringify(detail), 'utf8')
  return fencedWrite('this event', async () => {
    const row = await appendEvent(db, id, fence, step, detail, bytes, limits)
    if (!row) throw await refusal(db, id)
    if (row.outcome !== 'full') return { step: row.step, at: row.at, attempt: row.attempt }
    overLimit(row, bytes, limits)
    // Under both limits as the statement began: a concurrent write changed the row before it was
    // locked (took the last slot, or the lease): look again.
    return undefined
  })
}

// Throws event-limit when the counts as the statement began were already at a limit.
function overLimit(row: AppendRow, bytes: number, limits: EventLimits): void {
  if (row.attempt_events >= limits.perAttempt) {
    throw new DispatchError(DispatchCode.EventLimit, `this attempt already has ${limits.perAttempt} events`, {
      limit: 'events-per-attempt',
      max: limits.perAttempt,
    })
  }
  if (Number(row.event_bytes) + bytes > limits.detailBytes) {
    throw new DispatchError(
      DispatchCode.EventLimit,
      `the dispatch's events would hold more than ${limits.detailBytes} bytes of detail`,
      { limit: 'detail-bytes', max: limits.detailBytes, used: Number(row.event_bytes), event: bytes },
    )
  }
}
