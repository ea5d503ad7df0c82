// The worker's own Prometheus metrics, served on --metrics-port when it is given: busy slots,
// dispatches by how they ended, and how long each step took; the same server answers the health probes.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Health } from './health.js'
import type { Ending } from './job.js'

const JSON_TYPE = { 'content-type': 'application/json' }

export interface WorkerMetrics {
  registry: Registry
  // a slot took (+1) or finished (-1) a dispatch
  busy(delta: 1 | -1): void
  ended(ending: Ending): void
  // a dispatch spent `seconds` in `step`, and `cpu` seconds of CPU (this process and its children)
  stepTook(step: string, seconds: number, cpu?: number): void
  // a slot stopped claiming: a process of its uid could not be stopped, or what it left not removed
  outOfService(): void
}

export function createWorkerMetrics(opts: { concurrency: number; processMetrics?: boolean }): WorkerMetrics {
  const registry = new Registry()
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'preflight_worker_' })
  new Gauge({
    name: 'preflight_worker_slots',
    help: 'Dispatches this worker runs at once at most (--concurrency)',
    registers: [registry],
  }).set(opts.concurrency)
  const busy = new Gauge({
    name: 'preflight_worker_busy_slots',
    help: 'Slots running a dispatch now',
    registers: [registry],
  })
  const ended = new Counter({
    name: 'preflight_worker_dispatches_total',
    help: 'Dispatches this worker ran, by how they ended (abandoned: the lease was lost or the worker stopped)',
    labelNames: ['ending'] as const,
    registers: [registry],
  })
  const steps = new Histogram({
    name: 'preflight_worker_step_duration_seconds',
    help: 'Time a dispatch spent in each step (claim, prepare, setup, verify, baseline, agent, complete, cleanup …)',
    labelNames: ['step'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 7200],
    registers: [registry],
  })
  const stepCpu = new Counter({
    name: 'preflight_worker_step_cpu_seconds_total',
    help: 'CPU the worker and the programs it ran and waited for (git, setup, the agent, sweeps) spent in each step; exact with --concurrency 1, shared among the steps under way otherwise',
    labelNames: ['step'] as const,
    registers: [registry],
  })
  const outOfService = new Gauge({
    name: 'preflight_worker_slots_out_of_service',
    help: 'Slots that claim no more: a process of their uid could not be stopped, or what it left could not be removed (see the log)',
    registers: [registry],
  })
  return {
    registry,
    outOfService: () => outOfService.inc(),
    busy: (delta) => busy.inc(delta),
    ended: (ending) => ended.inc({ ending }),
    stepTook: (step, seconds, cpu) => {
      steps.observe({ step }, seconds)
      if (cpu !== undefined) stepCpu.inc({ step }, Math.max(0, cpu))
    },
  }
}

// GET /metrics on host:port, and with `health` the probes GET /healthz (200 while the process answers) and
// GET /readyz (200 when ready, else 503, with the readiness as JSON); anything else 404. Answers the port
// (0 picks a free one).
export async function serveMetrics(
  metrics: WorkerMetrics,
  port: number,
  host: string,
  health?: Pick<Health, 'readiness'>,
) {
  const server = createServer(async (req, res) => {
    const path = req.method === 'GET' ? req.url?.split('?')[0] : undefined
    if (path === '/metrics') {
      const text = await metrics.registry.metrics()
      res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text)
    } else if (health && path === '/healthz') {
      res.writeHead(200, JSON_TYPE).end(JSON.stringify({ status: 'ok' }))
    } else if (health && path === '/readyz') {
      const status = health.readiness()
      res.writeHead(status === 'ready' ? 200 : 503, JSON_TYPE).end(JSON.stringify({ status }))
    } else {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
