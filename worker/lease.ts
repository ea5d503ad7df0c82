// Keeps a dispatch's lease alive from claim to completion; tells the dispatch when the lease is lost or
// the dispatch was cancelled.
import type { Log } from '../src/log/log.js'
import { type Api, type DispatchFence, isCancelled, LeaseLostError } from './api.js'

const MIN_BEAT_MS = 250
// A cancel is learned from a heartbeat's answer: beating at least every second, the worker learns it
// within a second and a round trip (the coordinator writes the lease only once a third of it has run).
export const MAX_BEAT_MS = 1_000
// setTimeout's limit; a heartbeat resets the deadline long before it
const MAX_TIMER_MS = 2 ** 31 - 1

export interface LeaseKeeper {
  stop(): void
}

// Beats at a third of the remaining lease (at most MAX_BEAT_MS apart), so two missed beats still leave
// time for a third. The lease is lost on a 409, or when its last known expiresAt passes without a
// renewal: by then the coordinator's sweep may have handed the dispatch to another worker, whether or
// not it can tell us so. `onLost(true)`: the 409 said the dispatch was cancelled.
export function keepLease(
  api: Api,
  fence: DispatchFence,
  expiresAt: string,
  onLost: (cancelled: boolean) => void,
  log: Log,
): LeaseKeeper {
  let expiry = expiresAt
  let timer: NodeJS.Timeout | undefined
  let deadline: NodeJS.Timeout | undefined
  let stopped = false
  // the heartbeat in flight, if any: aborted after its interval, or by stop()
  let inFlight: AbortController | undefined
  const lose = (why: string, cancelled = false) => {
    if (stopped) return
    if (cancelled) log.info('cancelled', { why })
    else log.warn('lease lost', { why })
    stop()
    onLost(cancelled)
  }
  const expireAt = (at: string) => {
    clearTimeout(deadline)
    deadline = setTimeout(
      () => lose(`not renewed before it expired at ${at}`),
      Math.min(MAX_TIMER_MS, remainingMs(at)),
    )
    deadline.unref()
  }
  // a third of what is left of the lease: after a failed heartbeat the next one comes sooner
  const interval = () => Math.ceil(Math.min(MAX_BEAT_MS, Math.max(MIN_BEAT_MS, remainingMs(expiry) / 3)))
  const schedule = () => {
    if (stopped) return
    timer = setTimeout(beat, interval())
    timer.unref()
  }
  // Each heartbeat is given up after an interval: one stuck on a half-open connection must not hold
  // back the next ones while the lease runs out.
  const beat = async () => {
    const request = new AbortController()
    inFlight = request
    const giveUp = setTimeout(
      () => request.abort(new Error('no answer within the beat interval')),
      interval(),
    )
    try {
      const res = await api.heartbeat(fence, request.signal)
      const next = res?.lease?.expiresAt
      if (next && !stopped) {
        expiry = next
        expireAt(next)
      }
    } catch (err) {
      if (stopped) return
      if (err instanceof LeaseLostError) return lose(err.message, isCancelled(err))
      log.warn('heartbeat failed, will retry', { why: err instanceof Error ? err.message : String(err) })
    } finally {
      clearTimeout(giveUp)
    }
    schedule()
  }
  function stop() {
    stopped = true
    clearTimeout(timer)
    clearTimeout(deadline)
    inFlight?.abort()
  }
  expireAt(expiresAt)
  schedule()
  return { stop }
}

// By the worker's clock: worker and coordinator clocks are assumed to agree (NTP), as for any lease.
function remainingMs(expiresAt: string): number {
  return Math.max(0, Date.parse(expiresAt) - Date.now())
}
