// After tsc: copies the API reference page's script (@scalar/api-reference, a dev dependency) next to
// the compiled code, where the coordinator's /docs/scalar.js reads it (the image has no dev dependencies).
import { copyFileSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const from = fileURLToPath(import.meta.resolve('@scalar/api-reference/browser/standalone.js'))
mkdirSync('dist/assets', { recursive: true })
copyFileSync(from, 'dist/assets/scalar.js')

// PGlite's initdb, run once here: a first start of the embedded database loads this image instead
// (src/coordinator/db/pglite-datadir.ts)
const { writeImage } = await import('../dist/src/coordinator/db/pglite-datadir.js')
await writeImage()
