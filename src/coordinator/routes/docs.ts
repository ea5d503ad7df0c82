// The API reference page at /docs (Scalar, rendered in the browser from /openapi.json) and its script,
// served by the coordinator itself: the page asks nothing of any other host, and its
// Content-Security-Policy lets it ask nothing of any.
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { Scalar } from '@scalar/hono-api-reference'
import { Hono } from 'hono'

export const SCRIPT_PATH = '/docs/scalar.js'

// The bundle of @scalar/api-reference: copied next to the compiled code by `npm run build` (the image
// has no dev dependencies), read from node_modules in a clone. Read once, on the first request.
const BUNDLE_COPY = new URL('../../../assets/scalar.js', import.meta.url)
const BUNDLE_PACKAGE = '@scalar/api-reference/browser/standalone.js'

let bundle: Promise<string | undefined> | undefined
function readBundle(): Promise<string | undefined> {
  bundle ??= readFile(BUNDLE_COPY, 'utf8').catch(() =>
    readFile(createRequire(import.meta.url).resolve(BUNDLE_PACKAGE), 'utf8').catch(() => undefined),
  )
  return bundle
}

const csp = (nonce: string) =>
  [
    "default-src 'none'",
    `script-src 'self' 'nonce-${nonce}'`,
    // the reference injects its styles at run time
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    // the document, and "try it" requests to this coordinator only
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ')

export function docsRoutes() {
  const docs = new Hono()
  docs.get('/docs', async (c, next) => {
    const nonce = randomBytes(16).toString('base64')
    c.header('content-security-policy', csp(nonce))
    return Scalar({
      url: '/openapi.json',
      pageTitle: 'preflight coordinator API',
      cdn: SCRIPT_PATH,
      nonce,
      // no fonts from a font host, no telemetry, no proxy: nothing outside this coordinator
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      showDeveloperTools: 'never',
      agent: { disabled: true },
    })(c, next)
  })
  docs.get(SCRIPT_PATH, async (c) => {
    const text = await readBundle()
    if (text === undefined) return c.text('the reference page’s script is not installed', 404)
    c.header('content-type', 'text/javascript; charset=utf-8')
    c.header('cache-control', 'public, max-age=3600')
    return c.body(text)
  })
  return docs
}
