// The client's own transport: node:http and node:https with keep-alive agents of its own. fetch cost
// the worker 1.3 ms more CPU a request, at about ten requests a dispatch (docs/benchmarks.md).
import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

export interface Answer {
  status: number
  // where a redirect points (never followed: index.ts refuses it)
  location?: string | null
  text(): Promise<string>
}

export interface Sent {
  method: string
  headers: Record<string, string>
  body?: string
  signal?: AbortSignal
}

export type Send = (url: string, sent: Sent) => Promise<Answer>

export interface Bounds {
  // how long a request may go without a byte either way: fetch's own bound on an answer's headers
  // and on the pause between its body's chunks
  silenceMs: number
  // how long a connection may take to open: fetch's own
  connectMs: number
}

const BOUNDS: Bounds = { silenceMs: 300_000, connectMs: 10_000 }

// How long an idle connection is kept for the next request, unless the server's Keep-Alive hint says
// less (Node then keeps it a second less than the hint): fetch's default. A connection a server or
// proxy closed while idle is then seldom the one the next request is written to.
const IDLE_MS = 4_000

// Some proxies and firewalls refuse a request that names no client.
const USER_AGENT = 'preflight-client'

export function nodeTransport(bounds: Bounds = BOUNDS): Send {
  const options = { keepAlive: true, timeout: IDLE_MS }
  const agents = { http: new HttpAgent(options), https: new HttpsAgent(options) }
  return (url, sent) =>
    new Promise<Answer>((resolve, reject) => {
      const target = new URL(url)
      const secure = target.protocol === 'https:'
      const length = sent.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(sent.body)) }
      const req = (secure ? httpsRequest : httpRequest)(target, {
        method: sent.method,
        headers: { 'user-agent': USER_AGENT, ...sent.headers, ...length },
        agent: secure ? agents.https : agents.http,
        ...(sent.signal ? { signal: sent.signal } : {}),
      })
      // Set on the socket once it is this request's and open: a reused one still has its idle bound.
      // Until it is open, the connect bound (the agent's idle bound would otherwise apply).
      req.setTimeout(bounds.silenceMs, () =>
        req.destroy(
          req.socket?.connecting
            ? timedOut('no connection', bounds.connectMs)
            : timedOut('no answer', bounds.silenceMs),
        ),
      )
      req.once('socket', (socket) => {
        if (socket.connecting) socket.setTimeout(bounds.connectMs)
      })
      // an abort rejects with the signal's own reason, as fetch does
      req.on('error', (err) => reject(sent.signal?.aborted ? sent.signal.reason : err))
      req.once('response', (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        // a connection that drops half-way: 'aborted' (ECONNRESET), never an 'end'
        res.on('error', (err) => reject(sent.signal?.aborted ? sent.signal.reason : err))
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location,
            text: () => Promise.resolve(text),
          })
        })
      })
      req.end(sent.body)
    })
}

function timedOut(what: string, ms: number): Error {
  return Object.assign(new Error(`${what} within ${ms} ms`), { code: 'ETIMEDOUT' })
}
