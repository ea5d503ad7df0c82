// `npm run build`, last: compiles --observe's tracer (native/trace.c, docs/attribution.md) into
// dist/preflight-trace with the C compiler on the PATH. Without one the build goes on: the worker then
// traces with strace, and says so when it starts.
import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'

const cc = process.env.CC || 'cc'
mkdirSync('dist', { recursive: true })
const made = spawnSync(cc, ['-O2', '-Wall', '-Wextra', '-o', 'dist/preflight-trace', 'native/trace.c'], {
  stdio: 'inherit',
})
if (made.error?.code === 'ENOENT')
  console.warn(`build: no C compiler (${cc}): dist/preflight-trace not built; --observe will use strace`)
else if (made.status !== 0) process.exit(made.status ?? 1)
