// Prometheus metrics: dispatches by status (counted in the database), preflight outcomes, claim wait
// and HTTP latency; served as text at GET /metrics, open or behind PREFLIGHT_METRICS_TOKEN (src/coordinator/http/auth.ts).
// Scrapes cost the database and the event loop little, however many come (src/coordinator/http/scrape-limits.ts).
import { readFileSync } from 'node:fs'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { type CheckResult, DispatchStatus, type Outcome, REASON_CODES, Reason } from '../../contract/index.js'
import type { Orm } from '../db/client.js'
import { countDispatches, type DispatchCounts, type OpenCount } from '../db/status-counts.js'
import { paced, reusedFor } from './scrape-limits.js'

// The package's version, from src/coordinator/http or dist/src/coordinator/http.
const VERSION = (() => {
  for (const up of ['../../../package.json', '../../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8'))
      if (pkg.name === 'preflight') return String(pkg.version)
    } catch {}
  }
  return 'unknown'
})()

export interface Metrics {
  registry: Registry
  // Times a request by method, route pattern (never the raw path: ids would explode the series) and
  // status (http/edges.ts).
  observeRequest(method: string, route: string, status: number, ms: number): void
  // The exposition, rebuilt at most every cacheMs; a scrape's turn (false: over maxWaitMs away).
  exposition(): Promise<string>
  turn(): Promise<boolean>
  observeClaimWait(ms: number): void
  recordReport(subagent: string, report: { outcome: Outcome; results: readonly CheckResult[] }): void
  // A dispatch this coordinator ended (a completion, an aborting report, a cancel, the sweep), once.
  recordEnded(status: DispatchStatus, reason: string | undefined): void
  // Leases the sweep found lapsed: requeued for another attempt, or expired for good.
  recordLapsed(requeued: number, expired: number): void
}

export interface MetricsOptions {
  // Node process metrics (heap, event loop lag, …); off in tests that build many apps.
  processMetrics?: boolean
  // The exposition is rebuilt at most this often (0: on every scrape).
  cacheMs?: number
  // Scrapes answered per second at most; beyond, each waits its turn (0: no pacing), unless its turn
  // is over maxWaitMs away (5 s): then 429.
  perSecond?: number
  maxWaitMs?: number
}

// Prometheus scrapes every 15-60 s: figures up to 5 s old change nothing for it, and 100 scrapes a
// second are hundreds of Prometheus servers.
const DEFAULT_CACHE_MS = 5_000
const DEFAULT_PER_SECOND = 100

export function createMetrics(db: Orm, opts: MetricsOptions = {}): Metrics {
  const registry = new Registry()
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'preflight_' })
  const counts = countedOnce(db)
  dispatchGauges(counts, registry)
  queueGauges(counts, registry)
  new Gauge({
    name: 'preflight_build_info',
    help: 'The running coordinator: its version and Node.js version (always 1)',
    labelNames: ['version', 'node'] as const,
    registers: [registry],
  }).set({ version: VERSION, node: process.version }, 1)
  const ended = new Counter({
    name: 'preflight_dispatches_ended_total',
    help: 'Dispatches this coordinator ended, by final status and reason (setup reasons, preflight outcome, "" for none)',
    labelNames: ['status', 'reason'] as const,
    registers: [registry],
  })
  const lapsed = new Counter({
    name: 'preflight_lease_expiries_total',
    help: "Leases found lapsed by this coordinator's sweep: requeued for another attempt, or expired for good",
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  const reports = new Counter({
    name: 'preflight_reports_total',
    help: 'Stored preflight reports by subagent and outcome',
    labelNames: ['subagent', 'outcome'] as const,
    registers: [registry],
  })
  const results = new Counter({
    name: 'preflight_results_total',
    help: 'Requirement results by subagent, kind, status and reason ("" when met)',
    labelNames: ['subagent', 'kind', 'status', 'reason'] as const,
    registers: [registry],
  })
  const claimWait = new Histogram({
    name: 'preflight_claim_wait_seconds',
    help: 'How long a worker claim waited before it got a dispatch or gave up',
    buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 15, 30],
    registers: [registry],
  })
  const http = new Histogram({
    name: 'preflight_http_request_duration_seconds',
    help: 'HTTP request latency by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  })
  const requests = new Map<string, ReturnType<typeof http.labels>>()
  return {
    registry,
    observeRequest(method, route, status, ms) {
      // one series per method, route pattern and status: each kept, rather than found by its labels each time
      const key = `${method} ${route} ${status}`
      let series = requests.get(key)
      if (!series) {
        series = http.labels(method, route, String(status))
        requests.set(key, series)
      }
      series.observe(ms / 1000)
    },
    exposition: reusedFor(opts.cacheMs ?? DEFAULT_CACHE_MS, () => registry.metrics()),
    turn: paced(opts.perSecond ?? DEFAULT_PER_SECOND, opts.maxWaitMs),
    observeClaimWait: (ms) => claimWait.observe(ms / 1000),
    recordEnded: (status, reason) => ended.inc({ status, reason: endReasonLabel(reason) }),
    recordLapsed(requeued, expired) {
      if (requeued > 0) lapsed.inc({ outcome: 'requeued' }, requeued)
      if (expired > 0) lapsed.inc({ outcome: 'expired' }, expired)
    },
    recordReport(subagent, report) {
      reports.inc({ subagent, outcome: report.outcome })
      for (const r of report.results) {
        results.inc({ subagent, kind: r.kind, status: r.status, reason: reasonLabel(r.reason) })
      }
    },
  }
}

// Reasons come from workers: only the known codes become label values, so a worker cannot grow the series.
const knownReasons = new Set<string>(Object.values(Reason))
const reasonLabel = (reason: string | undefined) =>
  reason === undefined ? '' : knownReasons.has(reason) ? reason : 'other'

// The same for why a dispatch ended: setup reasons, preflight outcomes and the coordinator's own.
const knownEndReasons = new Set<string>([...REASON_CODES, 'unmet', 'error', 'lease-expired'])
const endReasonLabel = (reason: string | undefined) =>
  reason === undefined ? '' : knownEndReasons.has(reason) ? reason : 'other'

// Unmatched requests all share one label, so a scan of random URLs cannot grow the series.
// Counted in the database (when the exposition is rebuilt), so the figures are right whichever
// coordinator replica changed the rows: one statement per rebuild for every dispatch gauge, which the
// collects of one rebuild share.
function countedOnce(db: Orm): () => Promise<DispatchCounts | undefined> {
  let inflight: Promise<DispatchCounts | undefined> | undefined
  return () =>
    (inflight ??= countDispatches(db)
      // A database that does not answer leaves the gauges empty rather than failing the whole scrape.
      .catch(() => undefined)
      .finally(() => {
        inflight = undefined
      }))
}

function dispatchGauges(counts: () => Promise<DispatchCounts | undefined>, registry: Registry) {
  new Gauge({
    name: 'preflight_dispatches',
    help: 'Dispatches by status, counted in the database at scrape time',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const byStatus = (await counts())?.byStatus
      this.reset()
      if (byStatus)
        for (const status of DispatchStatus.options) this.set({ status }, byStatus.get(status)?.n ?? 0)
    },
  })
  new Gauge({
    name: 'preflight_oldest_queued_seconds',
    help: 'Age of the oldest queued dispatch in seconds (0 when none is queued)',
    registers: [registry],
    async collect() {
      const byStatus = (await counts())?.byStatus
      this.reset()
      if (byStatus) this.set(byStatus.get('queued')?.oldest ?? 0)
    },
  })
}

// Label sets given series of their own at most; the rest are summed under labels="(other)" (no label holds a parenthesis). Orchestrators
// choose the labels: without a bound, every new set would be a new series on every scrape.
export const MAX_LABEL_SETS = 20

// What an autoscaler reads (docs/kubernetes.md): queued dispatches, and those not ended (queued, claimed or
// running), by the dispatch's label set. Counted by the gauges' one statement above, when the exposition
// is rebuilt; labels="" (dispatches without labels, which any worker claims) is always there.
function queueGauges(counts: () => Promise<DispatchCounts | undefined>, registry: Registry) {
  const gauge = (name: string, help: string, counted: (c: OpenCount) => boolean) =>
    new Gauge({
      name,
      help,
      labelNames: ['labels'] as const,
      registers: [registry],
      async collect() {
        const found = (await counts())?.open
        this.reset()
        if (!found) return
        for (const [labels, n] of byLabelSet(found, counted)) this.set({ labels }, n)
      },
    })
  gauge(
    'preflight_queued_dispatches',
    'Queued dispatches by label set ("" none)',
    (c) => c.status === 'queued',
  )
  gauge(
    'preflight_open_dispatches',
    'Dispatches not ended (queued, claimed or running) by label set ("" none)',
    () => true,
  )
}

// The counts summed per label set: "" and the MAX_LABEL_SETS sets with most open dispatches by name, the
// others as "other". The choice is the same for both gauges, whatever `counted` keeps.
export function byLabelSet(found: OpenCount[], counted: (c: OpenCount) => boolean): Map<string, number> {
  const open = new Map<string, number>()
  for (const c of found) open.set(c.labels, (open.get(c.labels) ?? 0) + c.n)
  const named = new Set(
    [...open]
      .filter(([labels]) => labels !== '')
      .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
      .slice(0, MAX_LABEL_SETS)
      .map(([labels]) => labels),
  )
  const sums = new Map<string, number>([['', 0]])
  for (const c of found) {
    const key = c.labels === '' || named.has(c.labels) ? c.labels : '(other)'
    sums.set(key, (sums.get(key) ?? 0) + (counted(c) ? c.n : 0))
  }
  return sums
}
