// A TCP proxy in front of PostgreSQL for outage tests: it forwards, refuses (no listener: connects
// get ECONNREFUSED, open connections are cut), stalls (accepts and forwards nothing, as a host
// that stopped answering), or lets a new connection start up and goes down at its first query. The
// shared server itself is never touched.
import { connect, createServer, type Server, type Socket } from 'node:net'

type ProxyMode = 'forward' | 'refuse' | 'stall' | 'cut-at-first-query'

export interface TcpProxy {
  port: number
  // connections accepted so far, in any mode
  readonly accepted: number
  // `url` with its host and port replaced by the proxy's.
  via(url: string): string
  // Cuts every open connection and stops listening; `forward()` or `stall()` listens again.
  refuse(): Promise<void>
  forward(): Promise<void>
  // Accepts connections but passes no byte either way; open connections go silent too.
  stall(): Promise<void>
  // The next connection completes its startup (trust auth: the client sends nothing more until it
  // queries); when the client sends its first query, the proxy refuses from then on and cuts it.
  cutAtFirstQueryThenRefuse(): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward'
  const open = new Set<Socket>()
  const pairs = new Set<[Socket, Socket]>()
  const stalled = new Set<Socket>()
  const track = (s: Socket) => {
    open.add(s)
    s.once('close', () => open.delete(s))
    s.on('error', () => s.destroy())
  }
  let accepted = 0
  const onConnection = (client: Socket) => {
    accepted++
    track(client)
    if (mode === 'stall') {
      stalled.add(client)
      return client.pause()
    }
    const upstream = connect(target.port, target.host)
    track(upstream)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    if (mode === 'cut-at-first-query') cutAtFirstQueryOf(client, upstream)
    else client.pipe(upstream)
    upstream.pipe(client)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.once('close', end)
    upstream.once('close', end)
  }
  // The startup message is an int32 length followed by the rest; any byte after it is a query.
  const cutAtFirstQueryOf = (client: Socket, upstream: Socket) => {
    let seen = Buffer.alloc(0)
    client.on('data', (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk])
      const startup = seen.length >= 4 ? seen.readInt32BE(0) : Number.POSITIVE_INFINITY
      if (seen.length <= startup) return upstream.write(chunk)
      mode = 'refuse'
      void stopListening()
      client.destroy()
      upstream.destroy()
    })
  }
  let server: Server | undefined
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer(onConnection)
      s.once('error', reject)
      s.listen(port, '127.0.0.1', () => {
        server = s
        resolve((s.address() as { port: number }).port)
      })
    })
  const stopListening = () =>
    new Promise<void>((resolve) => {
      const s = server
      server = undefined
      if (!s) return resolve()
      s.close(() => resolve())
    })
  const cutAll = () => {
    for (const s of open) s.destroy()
  }
  const port = await listen(0)

  return {
    port,
    get accepted() {
      return accepted
    },
    via(url) {
      const u = new URL(url)
      u.hostname = '127.0.0.1'
      u.port = String(port)
      return u.toString()
    },
    async refuse() {
      mode = 'refuse'
      const closing = stopListening()
      cutAll()
      await closing
    },
    // Connections that went silent stay so: they are cut, as a peer that lost its state would.
    async forward() {
      mode = 'forward'
      for (const s of stalled) s.destroy()
      stalled.clear()
      if (!server) await listen(port)
    },
    async stall() {
      mode = 'stall'
      for (const pair of pairs) {
        const [client, upstream] = pair
        client.unpipe(upstream)
        upstream.unpipe(client)
        client.pause()
        upstream.pause()
        stalled.add(client)
      }
      if (!server) await listen(port)
    },
    async cutAtFirstQueryThenRefuse() {
      mode = 'cut-at-first-query'
      if (!server) await listen(port)
    },
    async close() {
      const closing = stopListening()
      cutAll()
      await closing
    },
  }
}
