// `npm run build`, after tsc: bundles the CLI's entry (main, the command table, commander) and `check`
// (the checks, picomatch, picocolors) into one file, dist/src/cli/bin.js, which bin/preflight.js runs.
// One file to read and compile instead of ~40 modules and three CommonJS packages: the start-up of
// `preflight --version` and `preflight check` (docs/benchmarks.md, "CLI start-up"). The other commands
// and zod stay the modules tsc wrote, beside it, imported when they run.
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'

const CLI = join(import.meta.dirname, '../dist/src/cli')
const LAZY = ['coordinator', 'worker', 'migrate', 'token', 'reports', 'dispatches', 'explain']

// the chunks of an earlier build (their names hold a hash)
for (const file of readdirSync(CLI)) if (/^bin(-.*)?\.js$/.test(file)) rmSync(join(CLI, file))

await build({
  entryPoints: [join(CLI, 'main.js')],
  outdir: CLI,
  entryNames: 'bin',
  // `check` in a chunk of its own: --version and --help do not read it
  splitting: true,
  chunkNames: 'bin-[name]-[hash]',
  bundle: true,
  // no comments or blanks to read (commander's are most of it); names kept for readable stacks
  minifyWhitespace: true,
  minifySyntax: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  external: [
    ...LAZY.map((name) => `./${name}.js`),
    // one UsageError class for the bundle and the modules beside it (main tells bad input by it)
    './errors.js',
    // zod, loaded only when a requirements file is not plainly valid or is a whole definition
    '../contract/requirements.js',
    '../contract/definition.js',
  ],
  // commander and picomatch are CommonJS: their require() of node: modules needs a real require
  banner: {
    js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  },
})
