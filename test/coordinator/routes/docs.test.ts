// The API reference page at /docs asks nothing of any host but the coordinator: its HTML names only
// same-origin URLs, its script is served by the coordinator, its CSP allows nothing else, and in a real
// browser (Chromium, when installed; required with CI=true) every request it makes goes to the coordinator.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestApp } from '../../support/app.js'
import { describeInChromium, launchChromium } from '../../support/chromium.js'

// Every URL the page's HTML names: src, href, and what a <script> imports. The CSP nonce goes first
// (in its attributes and its meta tag): it is base64, and a "//" in it was read as a URL.
function urlsIn(page: string): string[] {
  const nonce = /\bnonce="([^"]+)"/.exec(page)?.[1]
  const html = nonce ? page.replaceAll(nonce, '') : page
  const attributes = [...html.matchAll(/\b(?:src|href|action|content)\s*=\s*["']([^"']*)["']/gi)].map(
    ([, url]) => url as string,
  )
  const imports = [...html.matchAll(/\bimport\b[^'"]*['"]([^'"]+)['"]/g)].map(([, url]) => url as string)
  const absolute = [...html.matchAll(/\b(?:https?:)?\/\/[a-z0-9.-]+/gi)].map(([url]) => url)
  return [...attributes, ...imports, ...absolute]
}

const sameOrigin = (url: string) => new URL(url, 'http://coordinator/docs').origin === 'http://coordinator'

describe('the API reference page', () => {
  const h = useTestApp()

  it('names no URL outside the coordinator, and loads its script from it', async () => {
    const res = await h.app.request('/docs')
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<script src="/docs/scalar.js"')
    expect(html).toContain('"url":"/openapi.json"')
    const urls = urlsIn(html).filter((u) => !u.startsWith('width='))
    expect(urls.length).toBeGreaterThan(0)
    expect(urls.filter((u) => !sameOrigin(u))).toEqual([])
  })

  it('reads a nonce with "//" in it as no URL (base64: one page in 200 has one)', () => {
    const page = '<meta property="csp-nonce" content="a//b+c=" /><script nonce="a//b+c=">x()</script>'
    expect(urlsIn(page).filter((u) => !sameOrigin(u))).toEqual([])
    expect(urlsIn(`${page}<a href="//elsewhere.example">x</a>`).filter((u) => !sameOrigin(u))).toEqual([
      '//elsewhere.example',
    ])
  })

  it('forbids the browser any other origin (Content-Security-Policy), its inline script by nonce', async () => {
    const res = await h.app.request('/docs')
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+'(;|$)/)
    expect(csp).toContain("connect-src 'self'")
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1]
    expect(await res.text()).toContain(`nonce="${nonce}"`)
    // a new nonce for each page
    const again = (await h.app.request('/docs')).headers.get('content-security-policy')
    expect(again).not.toBe(csp)
  })

  it('serves the reference’s script itself, without a token', async () => {
    const res = await h.app.request('/docs/scalar.js')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/)
    expect((await res.text()).length).toBeGreaterThan(1_000_000)
  })
})

describeInChromium('the API reference page in Chromium', () => {
  const h = useTestApp()
  let base: string
  let close: () => void

  beforeAll(async () => {
    const server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    close = () => server.close()
  })
  afterAll(() => close?.())

  it('renders the operations, and every request it makes goes to the coordinator', async () => {
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const requests: string[] = []
      const refused: string[] = []
      page.on('request', (r) => requests.push(r.url()))
      // what the CSP blocked never becomes a request: the console says so instead
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text())
      })
      // (Chromium's own favicon fetch is no request of the page's: not seen here)
      await page.goto(`${base}/docs`)
      // an operation's summary, rendered from /openapi.json (the first group is open)
      // a 3.5 MB script to parse and a document to render: slow on a loaded 2-core machine
      await page.getByText('Register a definition', { exact: false }).first().waitFor({ timeout: 60_000 })
      // rendered, so the page has fetched its script and /openapi.json: what it asked for so far is in
      // `requests`, and anything the CSP stopped it from asking would be in `refused` (waiting for the
      // network to go idle instead timed out on a loaded machine)
      expect(requests).toEqual(
        expect.arrayContaining([`${base}/docs`, `${base}/docs/scalar.js`, `${base}/openapi.json`]),
      )
      expect(requests.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:'))).toEqual([])
      expect(refused).toEqual([])
    } finally {
      await browser.close()
    }
  }, 90_000)
})
