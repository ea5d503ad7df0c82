// The client's own transport: node:http and node:https with keep-alive agents of its own. fetch cost
// the worker 1.3 ms more CPU a request, at about ten requests a dispatch (docs/benchmarks.md).
import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

export interface Answer {
  status: number
  text(): Promise<string>
}

export interface Sent {
  method: string
  headers: Record<string, string>
  body?: string
  signal?: AbortSignal
}

export type Send = (url: string, sent: Sent) => Promise<Answer>

// How long a request may go without a byte either way: fetch's own bound on an answer's headers and
// on the pause between its body's chunks.
export const SILENCE_MS = 300_000

// How long an idle connection is kept for the next request, unless the server's Keep-Alive hint says
// less (Node then keeps it a second less than the hint): fetch's default. A connection a server or
// proxy closed while idle is then seldom the one the next request is written to.
const IDLE_MS = 4_000

export function nodeTransport(silenceMs = SILENCE_MS): Send {
  const options = { keepAlive: true, timeout: IDLE_MS }
  const agents = { http: new HttpAgent(options), https: new HttpsAgent(options) }
  return (url, sent) =>
    new Promise<Answer>((resolve, reject) => {
      const target = new URL(url)
      const secure = target.protocol === 'https:'
      const headers =
        sent.body === undefined
          ? sent.headers
          : { ...sent.headers, 'content-length': String(Buffer.byteLength(sent.body)) }
      const req = (secure ? httpsRequest : httpRequest)(target, {
        method: sent.method,
        headers,
        agent: secure ? agents.https : agents.http,
        ...(sent.signal ? { signal: sent.signal } : {}),
      })
      // set on the socket once it is this request's: a reused one still has its idle bound
      req.setTimeout(silenceMs, () => req.destroy(silent(silenceMs)))
      req.on('error', reject)
      req.once('response', (res) => {
        // never followed: the token goes to the address the client was given and nowhere else
        if ((res.statusCode ?? 0) >= 300 && (res.statusCode ?? 0) < 400) {
          res.resume()
          reject(new Error('unexpected redirect'))
          return
        }
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        // a connection that drops half-way: 'aborted' (ECONNRESET), never an 'end'
        res.on('error', reject)
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          resolve({ status: res.statusCode ?? 0, text: () => Promise.resolve(text) })
        })
      })
      req.end(sent.body)
    })
}

function silent(ms: number): Error {
  return Object.assign(new Error(`no answer for ${ms} ms`), { code: 'ETIMEDOUT' })
}
