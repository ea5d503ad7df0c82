// What the app is built from: the database, the coordinator's configuration, the claim and endings
// wakers, the claim hints, the metrics, the resolved tokens, the clock and the log.
import { type Log, silentLog } from '../log/log.js'
import { DEFAULT_DELIVERY, type DeliveryConfig } from './alerts/deliver.js'
import type { Database } from './db/client.js'
import { type EventLimits, lastEventIds } from './db/events.js'
import { PRIORITY_AGING_MS } from './db/leases.js'
import { ClaimHints } from './dispatch/claim-hints.js'
import { type Clock, systemClock } from './dispatch/long-poll.js'
import { Waker } from './dispatch/waker.js'
import { DispatchWatch } from './dispatch/watch.js'
import { createMetrics, type Metrics } from './http/metrics.js'
import { PerToken } from './http/per-token.js'
import { type Principal, TokenCache } from './http/token-cache.js'

export interface CoordinatorConfig {
  // How long a claim or heartbeat holds the lease.
  leaseMs: number
  // Claims per dispatch before a lapsed lease marks it `expired`.
  maxAttempts: number
  // Upper bound for a claim's `waitMs` (long-poll).
  claimWaitCapMs: number
  // How often a waiting claim looks again without a wake-up: only a safety net, a dispatch queued or
  // requeued on any coordinator wakes it (NOTIFY), this bounds a notification lost unnoticed.
  claimPollMs: number
  // Upper bound for the `waitMs` of GET /v1/dispatches/endings (long-poll); it looks again this often
  // without a wake-up, a safety net as for claims (every coordinator's endings wake it).
  endingsWaitCapMs: number
  endingsPollMs: number
  // An ending is answered once it is this old: it is stamped when its statement starts and seen when
  // it commits, so a younger one may still be followed by an older stamp (see db/dispatch-list.ts).
  endingsSettleMs: number
  // A queued dispatch waiting longer than this is claimed before every newer one, whatever their
  // priority (docs/dispatches.md).
  priorityAgingMs: number
  // Upper bound for the timeoutMs of GET /v1/dispatches/{id}?waitFor=terminal (long-poll).
  dispatchWaitCapMs: number
  // Requests waiting on one dispatch (that long-poll, event streams) look this often, all together, for
  // what other coordinators wrote; this coordinator's writes and every ending wake them at once.
  watchPollMs: number
  // GET /v1/dispatches/{id}/events: streams open at once on this coordinator (beyond: 503), a keep-alive
  // comment after this long without an event, and how long one stays open at most (then the client
  // resumes with Last-Event-ID).
  eventStreams: { max: number; keepAliveMs: number; maxDurationMs: number }
  // What one token holds open at once on this coordinator (beyond: 429 concurrency-limit): long-polls
  // that wait (claims, the endings' feed, GET /v1/dispatches/{id}?waitFor=terminal), and event streams.
  longPollsPerToken: number
  streamsPerToken: number
  // How often the server sweeps lapsed leases.
  sweepIntervalMs: number
  // The HTTP server's own bounds, before any route runs (docs/operations.md says why these values):
  // connections open at once (one more is closed as it is accepted), how long a request's headers may
  // take to arrive, and the whole request with its body (not the answer: long-polls and event streams
  // answer later), and how long an idle keep-alive connection is kept.
  maxConnections: number
  headersTimeoutMs: number
  receiveTimeoutMs: number
  keepAliveTimeoutMs: number
  bodyLimitBytes: number
  // How long a resolved bearer token is trusted without asking the database again, at most: anything
  // that takes a token away empties the cache at once (NOTIFY across coordinators).
  tokenCacheMs: number
  // Every request answers by then (503 `unavailable` when still waiting); a claim gets its wait on top.
  requestTimeoutMs: number
  // How long /readyz waits for the database before it says 503.
  readyTimeoutMs: number
  // Worker events per attempt, and bytes of their detail per dispatch (beyond: 422 event-limit).
  eventLimits: EventLimits
  // GET /metrics rebuilds its text (and counts dispatches) at most this often, and answers at most
  // metricsPerSecond scrapes a second (beyond, they wait their turn; over 5 s of turns: 429).
  metricsCacheMs: number
  metricsPerSecond: number
  // When set, GET /metrics needs `Authorization: Bearer <metricsToken>` (PREFLIGHT_METRICS_TOKEN).
  metricsToken?: string | undefined
  // Sending the webhooks' deliveries: poll interval, retry backoff, tries, receiver timeout.
  webhooks: DeliveryConfig
}

export const defaultConfig: CoordinatorConfig = {
  leaseMs: 60_000,
  maxAttempts: 3,
  claimWaitCapMs: 30_000,
  claimPollMs: 10_000,
  endingsWaitCapMs: 30_000,
  endingsPollMs: 10_000,
  endingsSettleMs: 1_000,
  priorityAgingMs: PRIORITY_AGING_MS,
  dispatchWaitCapMs: 30_000,
  watchPollMs: 1_000,
  eventStreams: { max: 100, keepAliveMs: 15_000, maxDurationMs: 900_000 },
  longPollsPerToken: 128,
  streamsPerToken: 20,
  sweepIntervalMs: 5_000,
  maxConnections: 4_096,
  headersTimeoutMs: 10_000,
  receiveTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  bodyLimitBytes: 1024 * 1024,
  tokenCacheMs: 10_000,
  // Above the default statement_timeout (15 s), so a slow statement ends as `timeout` first.
  requestTimeoutMs: 20_000,
  readyTimeoutMs: 800,
  eventLimits: { perAttempt: 32, detailBytes: 1024 * 1024 },
  metricsCacheMs: 5_000,
  metricsPerSecond: 100,
  webhooks: DEFAULT_DELIVERY,
}

export interface AppDeps {
  db: Database
  config?: Partial<CoordinatorConfig>
  waker?: Waker
  endings?: Waker
  watch?: DispatchWatch
  longPolls?: PerToken
  streams?: PerToken
  hints?: ClaimHints
  metrics?: Metrics
  tokens?: TokenCache<Principal>
  clock?: Clock
  log?: Log
}

export interface Deps {
  db: Database
  config: CoordinatorConfig
  waker: Waker
  // Woken when a dispatch ends (here, or elsewhere through NOTIFY): long-polls of GET /v1/dispatches/endings
  // look again.
  endings: Waker
  // Woken when one dispatch may have changed: long-polls of GET /v1/dispatches/{id} and event streams.
  watch: DispatchWatch
  // The long-polls and the event streams each token holds.
  longPolls: PerToken
  streams: PerToken
  hints: ClaimHints
  metrics: Metrics
  tokens: TokenCache<Principal>
  // What the long-polls and the event streams' keep-alives tell the time by.
  clock: Clock
  log: Log
}

export function resolveDeps(deps: AppDeps): Deps {
  const config = { ...defaultConfig, ...deps.config }
  return {
    db: deps.db,
    config,
    waker: deps.waker ?? new Waker(),
    endings: deps.endings ?? new Waker(),
    watch: deps.watch ?? new DispatchWatch((ids) => lastEventIds(deps.db.orm, ids), config.watchPollMs),
    longPolls: deps.longPolls ?? new PerToken('long-polls', config.longPollsPerToken),
    streams: deps.streams ?? new PerToken('event streams', config.streamsPerToken),
    hints: deps.hints ?? new ClaimHints(),
    metrics:
      deps.metrics ??
      createMetrics(deps.db.orm, { cacheMs: config.metricsCacheMs, perSecond: config.metricsPerSecond }),
    tokens: deps.tokens ?? new TokenCache<Principal>(config.tokenCacheMs),
    clock: deps.clock ?? systemClock,
    log: deps.log ?? silentLog,
  }
}
