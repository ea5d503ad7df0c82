// How GET /metrics stays cheap however many scrape: the text is reused for a while (one build, and
// one count of the dispatches, per few seconds), and answers are paced (a flood of scrapers waits
// its turns on timers instead of taking the event loop from the API). Before, each scrape counted
// every dispatch, and 40 scrapers on a million dispatches held /readyz for seconds.

// `build`'s last result while it is younger than `ms`; once older, the next call starts one rebuild
// and it and later calls get the previous result until the rebuild ends (only the first call waits,
// or every call when `ms` is 0). Concurrent callers share one build: 40 scrapers cost what one does.
export function reusedFor<T>(ms: number, build: () => Promise<T>): () => Promise<T> {
  let last: { value: T; at: number } | undefined
  let building: Promise<T> | undefined
  const rebuild = () => {
    building ??= build()
      .then((value) => {
        last = { value, at: Date.now() }
        return value
      })
      .finally(() => {
        building = undefined
      })
    return building
  }
  return () => {
    if (last && Date.now() - last.at < ms) return Promise.resolve(last.value)
    if (!last || ms <= 0) return rebuild()
    rebuild().catch(() => {})
    return Promise.resolve(last.value)
  }
}

// A turn more than this far off is refused rather than waited for.
export const MAX_WAIT_MS = 5_000

// Turns at most `perSecond` a second, evenly spaced: each call resolves true at its turn (at once when
// the last one is old enough), or false at once when its turn is over `maxWaitMs` away.
export function paced(perSecond: number, maxWaitMs = MAX_WAIT_MS): () => Promise<boolean> {
  if (perSecond <= 0) return () => Promise.resolve(true)
  const gap = 1000 / perSecond
  let next = 0
  return async () => {
    const now = Date.now()
    const turn = Math.max(now, next)
    if (turn - now > maxWaitMs) return false
    next = turn + gap
    if (turn > now) await new Promise((resolve) => setTimeout(resolve, turn - now))
    return true
  }
}
