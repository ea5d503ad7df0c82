// --exit-when-idle: a worker that stops by itself once it has held no dispatch for a while, so that a Job's
// pod (one pod per dispatch, KEDA's ScaledJob) that finds nothing to claim ends instead of waiting for ever.
// With one slot (the CLI refuses more) the worker claims only while no dispatch runs: the idle time counts
// from the start, or from the end of the last dispatch, across empty and failed claims.
import type { Api } from './api.js'

export function stopWhenIdle(api: Api, idleMs: number, stop: () => void, now = () => performance.now()): Api {
  let since = now()
  let held = false
  return {
    ...api,
    async claim(workerId, waitMs, signal, labels) {
      // the slot asks again: the dispatch it held has ended
      if (held) since = now()
      held = false
      // no long-poll past the idle time: the worker stops within it, not a claim's wait later
      const left = Math.max(0, Math.ceil(since + idleMs - now()))
      try {
        const answer = await api.claim(workerId, Math.min(waitMs, left), signal, labels)
        held = answer !== undefined
        return answer
      } finally {
        if (!held && now() - since >= idleMs) stop()
      }
    },
  }
}
