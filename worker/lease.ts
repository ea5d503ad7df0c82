// Keeps a dispatch's lease alive from claim to completion; tells the dispatch when the lease is lost.
import { type Api, type Fence, LeaseLostError } from './api.js'
import type { Log } from './log.js'

const MIN_BEAT_MS = 250
const MAX_BEAT_MS = 30_000

export interface LeaseKeeper {
  stop(): void
}

// Beats at a third of the remaining lease, so two missed beats still leave time for a third.
export function keepLease(
  api: Api,
  fence: Fence,
  expiresAt: string,
  onLost: () => void,
  log: Log,
): LeaseKeeper {
  let ttlMs = Math.max(0, Date.parse(expiresAt) - Date.now())
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  const beats = new AbortController()
  const schedule = () => {
    if (stopped) return
    timer = setTimeout(beat, Math.min(MAX_BEAT_MS, Math.max(MIN_BEAT_MS, ttlMs / 3)))
    timer.unref()
  }
  const beat = async () => {
    try {
      const res = await api.heartbeat(fence, beats.signal)
      const next = res?.lease?.expiresAt
      if (next) ttlMs = Math.max(0, Date.parse(next) - Date.now())
    } catch (err) {
      if (stopped) return
      if (err instanceof LeaseLostError) {
        log.warn(`dispatch ${fence.id}: lease lost (${err.message})`)
        stopped = true
        return onLost()
      }
      log.warn(
        `dispatch ${fence.id}: heartbeat failed, will retry: ${err instanceof Error ? err.message : err}`,
      )
    }
    schedule()
  }
  schedule()
  return {
    stop() {
      stopped = true
      clearTimeout(timer)
      beats.abort()
    },
  }
}
