// The worker's health as Kubernetes' probes read it (GET /healthz, /readyz beside /metrics): alive while it
// answers; ready once a claim has reached the coordinator with the worker's token, until a claim fails or
// the worker drains. Read from the claims the worker makes anyway: a probe sends nothing to the coordinator.
import type { Api } from './api.js'

export type Readiness = 'starting' | 'ready' | 'unreachable' | 'draining'

export interface Health {
  readiness(): Readiness
  // the worker stops claiming (a signal, or --exit-when-idle): not ready again
  draining(): void
  // `api` whose claims tell the health how they went; the first one asks without waiting, so that a
  // worker on an empty queue is ready after one round trip, not after a long-poll
  watch(api: Api): Api
}

export function createHealth(): Health {
  let state: Readiness = 'starting'
  const set = (next: Readiness) => {
    if (state !== 'draining') state = next
  }
  return {
    readiness: () => state,
    draining: () => {
      state = 'draining'
    },
    watch: (api) => ({
      ...api,
      async claim(workerId, waitMs, signal, labels) {
        try {
          const answer = await api.claim(workerId, state === 'starting' ? 0 : waitMs, signal, labels)
          set('ready')
          return answer
        } catch (err) {
          set('unreachable')
          throw err
        }
      },
    }),
  }
}
