// `npm run build`, last: compiles --observe's tracer (native/trace.c, docs/attribution.md) into
// dist/preflight-trace with the C compiler. Without one, or where it fails (a compiler without the C
// library's headers), the build goes on: the worker then traces with strace, and says so when it starts.
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'

const cc = process.env.CC || 'cc'
const out = 'dist/preflight-trace'
mkdirSync('dist', { recursive: true })
rmSync(out, { force: true })
const made = spawnSync(cc, ['-O2', '-Wall', '-Wextra', '-o', out, 'native/trace.c'], { stdio: 'inherit' })
if (made.status !== 0)
  console.warn(
    `build: ${out} not built (${made.error?.code === 'ENOENT' ? `no C compiler: ${cc}` : `${cc} failed`}): --observe will trace with strace`,
  )
