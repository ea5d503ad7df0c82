// End to end: a worker whose coordinator stops renewing its lease stops the agent when the lease expires.
//
// The coordinator here is a stand-in HTTP server on loopback (the worker and the agent are real
// processes). A stand-in because the real coordinator refuses a late completion itself (409), so only
// a server that records every request can show that the worker sent none; and it can stop answering
// heartbeats while still holding their connections open, which a stopped coordinator cannot do cleanly.
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killAll, spawnWorker } from '../support/e2e.js'
import { alive, tempDir } from '../support/git-fixtures.js'
import { waitFor } from '../support/wait.js'

const LEASE_MS = 3_000

interface StandIn {
  url: string
  // paths of every request received, in order
  requests: string[]
  // event steps the worker posted
  steps: string[]
  // from now on heartbeats are held open and never answered
  silence(): void
  close(): Promise<void>
}

let scratch: string
let standIn: StandIn | undefined
let agentPid: number | undefined

beforeAll(async () => {
  scratch = await tempDir('preflight-e2e-lease-')
})

afterAll(async () => {
  await killAll()
  if (agentPid) {
    try {
      process.kill(-agentPid, 'SIGKILL')
    } catch {}
  }
  await standIn?.close()
  await rm(scratch, { recursive: true, force: true })
})

// Hands out one dispatch whose agent runs `command` in `workspace`, then answers claims with 204.
async function startStandIn(workspace: string, command: string[]): Promise<StandIn> {
  const requests: string[] = []
  const steps: string[] = []
  let claimed = false
  let answering = true
  const lease = () => ({ token: 'stand-in-lease', expiresAt: new Date(Date.now() + LEASE_MS).toISOString() })
  const claim = {
    dispatch: {
      id: randomUUID(),
      attempt: 1,
      workspace: { path: workspace },
      subagent: { name: 'lease-expiry', version: 1 },
    },
    subagent: { name: 'lease-expiry', agent: { command } },
  }
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? ''
    requests.push(path)
    const body = JSON.parse((await text(req)) || '{}') as { step?: string }
    const reply = (status: number, json?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(json === undefined ? undefined : JSON.stringify(json))
    }
    if (path === '/v1/worker/claim') {
      if (!claimed) {
        claimed = true
        return reply(200, { ...claim, lease: lease() })
      }
      return void setTimeout(() => reply(204), 300)
    }
    if (path.endsWith('/heartbeat')) {
      if (answering) reply(200, { status: 'running', lease: lease() })
      return
    }
    if (path.endsWith('/events')) {
      steps.push(body.step ?? '')
      return reply(200, { step: body.step, at: new Date().toISOString(), attempt: 1 })
    }
    if (path.endsWith('/preflight')) return reply(200, { decision: 'proceed', status: 'running' })
    if (path.endsWith('/complete')) return reply(200, { status: 'succeeded' })
    reply(404, { error: { code: 'not-found', message: path } })
  }
  const server: Server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    steps,
    silence: () => {
      answering = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function text(req: IncomingMessage): Promise<string> {
  let out = ''
  for await (const chunk of req) out += chunk
  return out
}

describe('lease expiry', () => {
  it('stops the agent once its lease expires unrenewed and sends no completion', async () => {
    const workspace = await tempDir('preflight-e2e-ws-')
    const marker = join(scratch, 'agent.pid')
    const m = JSON.stringify(marker)
    standIn = await startStandIn(workspace, ['sh', '-c', `echo $$ > ${m}; sleep 60; echo done >> ${m}.done`])
    const worker = spawnWorker(standIn.url, { workdir: join(scratch, 'work'), roots: [workspace] })
    await waitFor(async () => existsSync(marker), { timeoutMs: 30_000, everyMs: 100, what: worker.output })
    agentPid = Number((await readFile(marker, 'utf8')).trim())
    // The coordinator goes quiet: no heartbeat is answered, no lease is renewed from here on.
    standIn.silence()
    await waitFor(async () => !alive(agentPid ?? 0), { timeoutMs: 20_000, everyMs: 100, what: worker.output })
    await worker.stop()
    expect(existsSync(`${marker}.done`)).toBe(false)
    expect(standIn.requests.filter((p) => p.endsWith('/complete'))).toEqual([])
    expect(standIn.steps).toEqual(['prepare', 'setup', 'verify', 'report', 'baseline', 'agent'])
    await rm(workspace, { recursive: true, force: true })
  }, 60_000)
})
