// The claim loop, against a stand-in coordinator on loopback that answers claims the real one never would.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createApi } from '../../worker/api.js'
import { workerConfig } from '../../worker/config.js'
import { startWorker } from '../../worker/worker.js'
import { recordingLog } from '../support/log.js'
import { tempDir } from './git-fixtures.js'
import { GIT } from './worker-git.js'

let server: Server | undefined

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
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
    const worker = startWorker(
      workerConfig({
        workerId: 'w-claims',
        git: GIT,
        workdir: await tempDir('preflight-claims-'),
        waitMs: 0,
        graceMs: 1_000,
        maxDispatches: 1,
      }),
      {
        api: createApi({ url: `http://127.0.0.1:${port}`, token: 'worker-token' }),
        log,
        env: process.env,
      },
    )
    await worker.done
    expect(worker.counts).toMatchObject({ abandoned: 1, preflight_failed: 0, succeeded: 0 })
    expect(paths).toEqual(['/v1/worker/claim'])
    expect(warnings).toHaveLength(1)
  })
})
