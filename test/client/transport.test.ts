// The client's node:http(s) transport against real servers on loopback: connections kept and let go,
// a silent server, an answer cut short, an abort, and TLS with a certificate the process trusts.
import { execFile, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { type AddressInfo, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/index.js'
import { nodeTransport } from '../../src/client/transport.js'

const LISTEN_NEVER_ACCEPT = `import socket, time
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(0)
print(s.getsockname()[1], flush=True)
time.sleep(60)`

let server: Server | undefined
afterEach(
  () =>
    new Promise<void>((r) => {
      if (!server) return r()
      server.close(() => r())
      // an answer a test left half-written holds its connection open
      server.closeAllConnections()
      server = undefined
    }),
)

async function listen(s: Server): Promise<string> {
  server = s
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
}

const ok = (_req: unknown, res: import('node:http').ServerResponse) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}')
const get = { method: 'GET', headers: {} }

describe('the node:http transport', () => {
  it('names itself, and sends a body whole with its length in bytes (the coordinator reads that header)', async () => {
    const seen: { agent?: string; length?: string; body: string }[] = []
    const url = await listen(
      createServer(async (req, res) => {
        let body = ''
        for await (const chunk of req) body += chunk
        seen.push({ agent: req.headers['user-agent'], length: req.headers['content-length'], body })
        ok(req, res)
      }),
    )
    const body = JSON.stringify({ step: 'setup — é €' })
    await nodeTransport()(`${url}/x`, { method: 'POST', headers: {}, body })
    expect(seen).toEqual([{ agent: 'preflight-client', length: String(Buffer.byteLength(body)), body }])
  })

  it('sends the next request on the connection the last one used', async () => {
    const s = createServer(ok)
    let connections = 0
    s.on('connection', () => connections++)
    const url = await listen(s)
    const send = nodeTransport()
    for (let i = 0; i < 3; i++) expect((await send(`${url}/healthz`, get)).status).toBe(200)
    expect(connections).toBe(1)
  })

  it('waits on a reused connection past its idle bound, as a long-polling claim does', async () => {
    let calls = 0
    let connections = 0
    const s = createServer((req, res) => {
      calls++
      setTimeout(() => ok(req, res), calls === 1 ? 0 : 4_500)
    })
    s.on('connection', () => connections++)
    const url = await listen(s)
    const send = nodeTransport()
    await send(`${url}/a`, get)
    // an idle connection is kept 4 s: its bound must not cut the answer that takes 4.5 s
    expect((await send(`${url}/claim`, get)).status).toBe(200)
    expect(connections).toBe(1)
  })

  it("lets an idle connection go before the server's keep-alive hint runs out", async () => {
    const s = createServer(ok)
    s.keepAliveTimeout = 2_000
    const url = await listen(s)
    const send = nodeTransport()
    await send(`${url}/a`, get)
    // the server says timeout=2: Node keeps it 1 s; after 2.1 s the server closed it too
    for (const pause of [1_200, 2_100]) {
      await new Promise((r) => setTimeout(r, pause))
      expect((await send(`${url}/b`, get)).status).toBe(200)
    }
  })

  it('gives up on a server that says nothing for its bound', async () => {
    const url = await listen(createServer(() => {}))
    const started = Date.now()
    await expect(nodeTransport({ silenceMs: 300, connectMs: 10_000 })(`${url}/x`, get)).rejects.toThrow(
      /^no answer within 300 ms$/,
    )
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it('rejects an answer whose connection drops half-way, never waits for its end', async () => {
    const url = await listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-length': '100' })
        res.write('{"status":')
        setTimeout(() => res.socket?.destroy(), 50)
      }),
    )
    const started = Date.now()
    const err = await nodeTransport({ silenceMs: 20_000, connectMs: 10_000 })(`${url}/x`, get).then(
      (answer) => answer.text(),
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(Error)
    expect((err as { code?: string }).code).not.toBe('ETIMEDOUT')
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("stops at once when its signal aborts, with the signal's reason, before the answer or during it", async () => {
    const url = await listen(
      createServer((req, res) => {
        if (req.url === '/v1/dispatches/x') res.writeHead(200).write('{"id":')
      }),
    )
    const client = createClient({ url, token: 't', retry: false })
    const calls = [
      (signal: AbortSignal) => client.getLiveness({ signal }),
      (signal: AbortSignal) => client.getDispatch('x', { signal }),
    ]
    for (const call of calls) {
      const controller = new AbortController()
      const reason = new Error('the dispatch was cancelled')
      setTimeout(() => controller.abort(reason), 50)
      const started = Date.now()
      const err = await call(controller.signal).catch((e: unknown) => e)
      expect(err).toBe(reason)
      expect(Date.now() - started).toBeLessThan(2_000)
    }
  })

  it('gives up on a connection that does not open within its bound, and says so', async () => {
    // a listener that never accepts, its queue full: the kernel drops the next SYN
    const holder = spawn('python3', ['-c', LISTEN_NEVER_ACCEPT], { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const port = Number((await once(holder.stdout, 'data'))[0].toString())
      const queued = [0, 1, 2].map(() => connect(port, '127.0.0.1').on('error', () => {}))
      await new Promise((r) => setTimeout(r, 200))
      const started = Date.now()
      const send = nodeTransport({ silenceMs: 20_000, connectMs: 500 })
      await expect(send(`http://127.0.0.1:${port}/healthz`, get)).rejects.toThrow(
        /^no connection within 500 ms$/,
      )
      // not the agent's idle bound of 4 s, nor the silence bound
      expect(Date.now() - started).toBeLessThan(3_000)
      for (const socket of queued) socket.destroy()
    } finally {
      holder.kill()
    }
  })

  it('speaks TLS to a coordinator whose certificate the process trusts (NODE_EXTRA_CA_CERTS)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-tls-'))
    try {
      const key = join(dir, 'key.pem')
      const cert = join(dir, 'cert.pem')
      execFileSync(
        'openssl',
        [
          ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
          ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
        ],
        { stdio: 'ignore' },
      )
      const s = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) }, ok) as unknown as Server
      const url = (await listen(s)).replace('http:', 'https:')
      const script = `import { createClient } from ${JSON.stringify(new URL('../../src/client/index.ts', import.meta.url).pathname)}
        const client = createClient({ url: process.argv[1], token: 't', retry: false })
        console.log(JSON.stringify(await client.getLiveness()))`
      // a child of its own: its trust is set when it starts; asynchronously, so this process answers
      const run = (extra: Record<string, string>) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          const args = ['--import', 'tsx', '--input-type=module', '-e', script, url]
          const env = { ...process.env, ...extra }
          execFile(process.execPath, args, { env, timeout: 30_000 }, (err, stdout, stderr) =>
            resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
          )
        })
      const trusted = await run({ NODE_EXTRA_CA_CERTS: cert })
      expect(trusted.stdout.trim()).toBe('{"status":"ok"}')
      // and without the certificate, the connection is refused, not made
      const untrusted = await run({})
      expect(untrusted.code).not.toBe(0)
      expect(untrusted.stderr).toMatch(/cannot reach the coordinator at https:.*SELF_SIGNED/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
