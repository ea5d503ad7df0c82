// Runs the app over HTTP with the lease sweep, NOTIFY wake-ups, token revocations and the webhooks'
// deliveries; stop() shuts it all down once.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { type Log, silentLog } from '../log/log.js'
import { startDeliverer } from './alerts/deliver.js'
import { createApp } from './app.js'
import { type CoordinatorConfig, type Deps, resolveDeps } from './config.js'
import { PROBE_INTERVAL_MS } from './db/circuit.js'
import type { Database } from './db/client.js'
import { sweepLeases } from './db/leases.js'
import { ENDED_CHANNEL, NOTIFY_CHANNEL, TOKENS_CHANNEL } from './db/sql.js'
import { WEBHOOKS_CHANNEL } from './db/webhooks.js'
import { Waker } from './dispatch/waker.js'
import type { DispatchWatch } from './dispatch/watch.js'

export interface ServerOptions {
  db: Database
  port: number
  host?: string
  config?: Partial<CoordinatorConfig>
  log?: Log
  // tests pass their own, to see when a claim (or a long-poll of the endings) is parked
  waker?: Waker
  endings?: Waker
  watch?: DispatchWatch
}

export interface RunningServer {
  port: number
  url: string
  stop(): Promise<void>
}

// Connections still open this long after stop() are cut (long-polls end at once anyway).
const CLOSE_GRACE_MS = 10_000

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const log = opts.log ?? silentLog
  const deps = resolveDeps({
    db: opts.db,
    config: opts.config ?? {},
    waker: opts.waker ?? new Waker(),
    endings: opts.endings ?? new Waker(),
    ...(opts.watch ? { watch: opts.watch } : {}),
    log,
  })
  const app = createApp(deps)
  // After a lost LISTEN connection, a missed NOTIFY is made up for: claims look again, tokens are re-read.
  const wake = () => deps.waker.wake()
  const unlistenDispatches = await opts.db.listen(NOTIFY_CHANNEL, wake, wake)
  // Any coordinator's ending: the endings' long-polls and what waits on that dispatch look at once.
  const ended = (id: string) => {
    deps.endings.wake()
    deps.watch.changed(id)
  }
  const unlistenEnded = await opts.db.listen(ENDED_CHANNEL, ended, () => {
    deps.endings.wake()
    deps.watch.wakeAll()
  })
  const forget = () => deps.tokens.invalidate()
  const unlistenTokens = await opts.db.listen(TOKENS_CHANNEL, forget, forget)
  const unwatchCircuit = logCircuit(opts.db, log)
  const sweeper = startSweeper(deps)
  const deliverer = startDeliverer(deps.db.orm, deps.config.webhooks, log)
  const deliver = () => deliverer.wake()
  const unlistenWebhooks = await opts.db.listen(WEBHOOKS_CHANNEL, deliver, deliver)
  const { server, port } = await listen(app.fetch, opts.port, opts.host ?? '0.0.0.0', deps.config)
  const host = opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1'
  let stopping: Promise<void> | undefined
  return {
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    stop() {
      stopping ??= (async () => {
        clearInterval(sweeper)
        deps.waker.close()
        deps.endings.close()
        deps.watch.close()
        await closeServer(server)
        await unlistenDispatches().catch(() => {})
        await unlistenEnded().catch(() => {})
        await unlistenTokens().catch(() => {})
        await unlistenWebhooks().catch(() => {})
        await deliverer.stop()
        unwatchCircuit()
      })()
      return stopping
    },
  }
}

// What an operator reads of an outage: when this coordinator found the database unreachable (requests
// that need it answer 503 from then on), and when its probe reached it again, after how long.
function logCircuit(db: Database, log: Log): () => void {
  let openedAt = 0
  const unwatch = db.circuit?.onChange((open) => {
    if (open) {
      openedAt = performance.now()
      log.warn('database unreachable: requests that need it answer 503 until a probe reaches it', {
        probeEveryMs: PROBE_INTERVAL_MS,
      })
    } else {
      log.info('database reachable again', { unreachableMs: Math.round(performance.now() - openedAt) })
    }
  })
  return () => unwatch?.()
}

function startSweeper({ db, waker, endings, watch, metrics, config, log }: Deps) {
  let busy = false
  const timer = setInterval(async () => {
    if (busy) return
    busy = true
    try {
      // Waiting claims of this process wake at once; those of other coordinators through NOTIFY.
      const lapsed = await sweepLeases(db.orm, { notify: db.kind === 'postgres' })
      const expired = lapsed.filter((d) => d.status === 'expired')
      metrics.recordLapsed(lapsed.length - expired.length, expired.length)
      for (const d of expired) metrics.recordEnded('expired', d.reason ?? 'lease-expired')
      if (lapsed.length > expired.length) waker.wake()
      if (expired.length > 0) endings.wake()
      for (const { id } of lapsed) watch.changed(id)
    } catch (err) {
      log.warn('lease sweep failed', { err })
    } finally {
      busy = false
    }
  }, config.sweepIntervalMs)
  timer.unref()
  return timer
}

// Node's defaults bound neither how many connections are open nor, for a minute, how long a request
// may take to send its headers: a client that sends half a request and holds it costs a descriptor.
function listen(
  fetch: (req: Request) => Response | Promise<Response>,
  port: number,
  hostname: string,
  config: CoordinatorConfig,
) {
  const serverOptions = {
    headersTimeout: config.headersTimeoutMs,
    // the request as it arrives, not its answer: long-polls and event streams are not cut
    requestTimeout: config.receiveTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // how often Node looks for requests past those two: its 30 s would let one outlive its timeout by as much
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, config.headersTimeoutMs / 4)),
  }
  return new Promise<{ server: Server; port: number }>((resolve, reject) => {
    const server = serve({ fetch, port, hostname, serverOptions }, (info: AddressInfo) =>
      resolve({ server, port: info.port }),
    ) as Server
    // past the cap, a connection is closed as soon as it is accepted
    server.maxConnections = config.maxConnections
    server.once('error', reject)
  })
}

async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  // Keep-alive connections turn idle as their last response ends: close them as they do.
  const idle = setInterval(() => server.closeIdleConnections(), 50)
  const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS)
  server.closeIdleConnections()
  await closed
  clearInterval(idle)
  clearTimeout(cut)
}
