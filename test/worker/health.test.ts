// The worker's probes over real HTTP (GET /healthz, /readyz beside /metrics), a real worker process and a
// coordinator: what Kubernetes' liveness and readiness probes of deploy/kubernetes read.
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  dispatch,
  e2eSuite,
  fakeAgent,
  freePort,
  markerIn,
  register,
  serveCoordinator,
  spawnWorker,
  waitForStatus,
} from '../support/e2e.js'
import { waitFor } from '../support/wait.js'

const suite = e2eSuite()

const probe = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: res.status, body: (await res.json()) as { status: string } }
}

describe('the worker health endpoint', () => {
  it('is ready after one claim without waiting out a long-poll, and draining from SIGTERM on', async () => {
    const { url } = await serveCoordinator(suite)
    const port = await freePort()
    // an empty queue and long-polls of 60 s (the coordinator caps them at 30): ready within 15 s says
    // the first claim did not wait for work
    const worker = spawnWorker(url, {
      workdir: `${suite.scratch}/w1`,
      args: ['--metrics-port', String(port), '--wait-ms', '60000'],
    })
    await waitFor(
      () =>
        probe(port, '/readyz').then(
          (r) => r.status === 200,
          () => false,
        ),
      {
        timeoutMs: 15_000,
        everyMs: 50,
        what: () => worker.output(),
      },
    )
    expect(await probe(port, '/readyz')).toEqual({ status: 200, body: { status: 'ready' } })
    expect(await probe(port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } })

    // a dispatch that runs a while: the worker drains it after SIGTERM, not ready but alive meanwhile
    await register(url, { name: 'slow', agent: { command: fakeAgent(markerIn(suite.scratch), 3) } })
    const id = await dispatch(url, 'slow', { repo: suite.repo })
    await waitFor(() => existsSync(markerIn(suite.scratch)), {
      timeoutMs: 30_000,
      what: () => worker.output(),
    })
    worker.child.kill('SIGTERM')
    await waitFor(
      () =>
        probe(port, '/readyz').then(
          (r) => r.status === 503,
          () => false,
        ),
      {
        what: () => worker.output(),
      },
    )
    expect(await probe(port, '/readyz')).toEqual({ status: 503, body: { status: 'draining' } })
    expect(await probe(port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } })
    expect((await waitForStatus(url, id)).status).toBe('succeeded')
    expect(await worker.exited).toBe(0)
  })

  it('is not ready while its claims do not reach the coordinator, and alive all the same', async () => {
    const port = await freePort()
    const nobody = `http://127.0.0.1:${await freePort()}`
    const worker = spawnWorker(nobody, {
      workdir: `${suite.scratch}/w2`,
      args: ['--metrics-port', String(port)],
    })
    await waitFor(
      () =>
        probe(port, '/readyz').then(
          (r) => r.body.status === 'unreachable',
          () => false,
        ),
      {
        timeoutMs: 20_000,
        what: () => worker.output(),
      },
    )
    expect(await probe(port, '/readyz')).toEqual({ status: 503, body: { status: 'unreachable' } })
    expect(await probe(port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } })
    await worker.stop()
  })
})
