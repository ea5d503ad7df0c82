// The API reference page at /docs (Scalar, rendered in the browser from /openapi.json) and its script,
// served by the coordinator itself: the page asks nothing of any other host, and its
// Content-Security-Policy lets it ask nothing of any.
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { Hono } from 'hono'

export const SCRIPT_PATH = '/docs/scalar.js'

// The bundle of @scalar/api-reference: copied next to the compiled code by `npm run build` (the image
// has no dev dependencies), read from node_modules in a clone. Read once, on the first request. The copy
// is dist/assets/, from dist/src/coordinator/routes/ (tsc's module) or from dist/src/cli/ (the CLI's
// coordinator chunk, scripts/bundle-cli.ts).
const BUNDLE_COPIES = [
  new URL('../../../assets/scalar.js', import.meta.url),
  new URL('../../assets/scalar.js', import.meta.url),
]
const BUNDLE_PACKAGE = '@scalar/api-reference/browser/standalone.js'

let bundle: Promise<string | undefined> | undefined
function readBundle(): Promise<string | undefined> {
  bundle ??= (async () => {
    for (const copy of BUNDLE_COPIES) {
      const text = await readFile(copy, 'utf8').catch(() => undefined)
      if (text !== undefined) return text
    }
    try {
      return await readFile(createRequire(import.meta.url).resolve(BUNDLE_PACKAGE), 'utf8')
    } catch {
      return undefined
    }
  })()
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

// The page as Scalar's own integrations write it: its standalone bundle (served below) renders
// /openapi.json. Written here, not taken from @scalar/hono-api-reference, which requires Node 22 (this
// project runs on 20.19 and up) for these few lines. No fonts from a font host, no telemetry, no proxy:
// nothing outside this coordinator.
const CONFIG = JSON.stringify({
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
})

// `nonce` is base64: nothing in it needs escaping in an attribute
const page = (nonce: string) => `<!doctype html>
<html>
  <head>
    <title>preflight coordinator API</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta property="csp-nonce" content="${nonce}" />
  </head>
  <body>
    <div id="app"></div>
    <script src="${SCRIPT_PATH}" nonce="${nonce}"></script>
    <script nonce="${nonce}">Scalar.createApiReference('#app', ${CONFIG})</script>
  </body>
</html>`

export function docsRoutes() {
  const docs = new Hono()
  docs.get('/docs', (c) => {
    const nonce = randomBytes(16).toString('base64')
    c.header('content-security-policy', csp(nonce))
    return c.html(page(nonce))
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
