// /metrics under 40 parallel scrapers on 1,000,000 dispatches: while they scrape back to back, a load
// balancer probes /readyz and an operator pages GET /v1/reports; their latency is measured with the
// scrapers and without them. Issue #9: /metrics counted every dispatch on each scrape, and 40 scrapers
// pushed /readyz to 4.6-7.4 s. Target: /readyz and /v1/reports p99 ≤ 50 ms.
import { Agent, request } from 'node:http'
import { DISPATCHES } from './coordinator-dispatches.js'
import { formatMs, percentile } from './coordinator-stats.js'

interface ScrapeOptions {
  url: string
  operatorToken: string
  metricsToken?: string
  scrapers: number
  seconds: number
}

export async function runScrapeBench(opts: ScrapeOptions): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.scrapers + 8 })
  const { hostname, port } = new URL(opts.url)
  const get = (path: string, token?: string) =>
    new Promise<{ status: number; bytes: number }>((resolve, reject) => {
      const headers = token ? { authorization: `Bearer ${token}` } : {}
      const req = request({ hostname, port, path, headers, agent }, (res) => {
        let bytes = 0
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end()
    })
  // One client probing back to back; every answer must be 200.
  const probe = async (path: string, token: string | undefined, until: number) => {
    const ms: number[] = []
    while (performance.now() < until) {
      const started = performance.now()
      const { status } = await get(path, token)
      ms.push(performance.now() - started)
      if (status !== 200) throw new Error(`${path}: HTTP ${status}`)
    }
    return ms
  }
  const measure = async (seconds: number, scrapers: number) => {
    const until = performance.now() + seconds * 1000
    let scrapes = 0
    const scraping = Array.from({ length: scrapers }, async () => {
      while (performance.now() < until) {
        const { status } = await get('/metrics', opts.metricsToken)
        if (status !== 200) throw new Error(`/metrics: HTTP ${status}`)
        scrapes++
      }
    })
    const [ready, reports] = await Promise.all([
      probe('/readyz', undefined, until),
      probe('/v1/reports?limit=50', opts.operatorToken, until),
      ...scraping,
    ])
    return { ready, reports, scrapesPerSecond: scrapes / seconds }
  }
  const line = (name: string, ms: number[]) =>
    `  ${name.padEnd(24)} p50 ${formatMs(percentile(ms, 50))}   p99 ${formatMs(percentile(ms, 99))}   max ${formatMs(Math.max(...ms))}   (${ms.length} requests)`

  // A first scrape counts the dispatches (what every scrape cost before); the clock starts after it.
  const first = performance.now()
  await get('/metrics', opts.metricsToken)
  console.log(`\n## /metrics on ${DISPATCHES.toLocaleString('en')} dispatches`)
  console.log(`  first scrape (counts the dispatches): ${formatMs(performance.now() - first)}`)
  const quiet = await measure(Math.max(2, opts.seconds / 3), 0)
  console.log('  without scrapers:')
  console.log(line('/readyz', quiet.ready))
  console.log(line('GET /v1/reports?limit=50', quiet.reports))
  const busy = await measure(opts.seconds, opts.scrapers)
  console.log(
    `  with ${opts.scrapers} scrapers back to back (${busy.scrapesPerSecond.toFixed(0)} scrapes/s):`,
  )
  console.log(line('/readyz', busy.ready))
  console.log(line('GET /v1/reports?limit=50', busy.reports))
  agent.destroy()
}
