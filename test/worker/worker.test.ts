// The claim loop, against a stand-in coordinator on loopback that answers claims the real one never would.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createApi } from '../../worker/api.js'
import { workerConfig } from '../../worker/config.js'
import { createWorkerMetrics, serveMetrics } from '../../worker/metrics.js'
import { startWorker } from '../../worker/worker.js'
import { removeAll, tempDir } from '../support/git-fixtures.js'
import { recordingLog } from '../support/log.js'
import { GIT } from '../support/worker-git.js'

let server: Server | undefined
const dirs: string[] = []

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
  await removeAll(dirs)
})

describe('the claim loop', () => {
  // Without a dispatch id, attempt and lease nothing can be fenced: nothing is written back, nothing runs,
  // and the lease lapses so the coordinator hands the dispatch to another attempt.
  it('lets a claim without a readable fence lapse: it writes nothing and runs nothing', async () => {
    const paths: string[] = []
    server = createServer((req, res) => {
      paths.push(req.url ?? '')
      req.resume()
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ dispatch: { id: 'not-a-uuid', attempt: 1 }, subagent: {}, lease: {} }))
    })
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const { log, warnings } = recordingLog()
    const metrics = createWorkerMetrics({ concurrency: 1, processMetrics: false })
    const workdir = await tempDir('preflight-claims-')
    dirs.push(workdir)
    const worker = startWorker(
      workerConfig({
        workerId: 'w-claims',
        git: GIT,
        workdir,
        waitMs: 0,
        graceMs: 1_000,
        maxDispatches: 1,
      }),
      {
        api: createApi({ url: `http://127.0.0.1:${port}`, token: 'worker-token' }),
        log,
        env: process.env,
        metrics,
      },
    )
    await worker.done
    expect(worker.counts).toMatchObject({ abandoned: 1, preflight_failed: 0, succeeded: 0 })
    expect(await metrics.registry.metrics()).toContain(
      'preflight_worker_dispatches_total{ending="abandoned"} 1',
    )
    expect(paths).toEqual(['/v1/worker/claim'])
    expect(warnings).toHaveLength(1)
  })
})

describe('the worker metrics', () => {
  it('serves busy slots, endings and step times at GET /metrics, and nothing else', async () => {
    const metrics = createWorkerMetrics({ concurrency: 4, processMetrics: false })
    metrics.busy(1)
    metrics.busy(1)
    metrics.busy(-1)
    metrics.ended('preflight_failed')
    metrics.stepTook('verify', 0.2)
    const served = await serveMetrics(metrics, 0, '127.0.0.1')
    try {
      const res = await fetch(`http://127.0.0.1:${served.port}/metrics`)
      const text = await res.text()
      expect(res.headers.get('content-type')).toContain('text/plain')
      expect(text).toContain('preflight_worker_slots 4')
      expect(text).toContain('preflight_worker_busy_slots 1')
      expect(text).toContain('preflight_worker_dispatches_total{ending="preflight_failed"} 1')
      expect(text).toContain('preflight_worker_step_duration_seconds_count{step="verify"} 1')
      expect((await fetch(`http://127.0.0.1:${served.port}/`)).status).toBe(404)
      expect((await fetch(`http://127.0.0.1:${served.port}/metrics`, { method: 'POST' })).status).toBe(404)
    } finally {
      await served.close()
    }
  })
})
