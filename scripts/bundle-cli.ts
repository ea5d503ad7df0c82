// `npm run build`, after tsc: bundles the CLI's entry (main, the command table, commander) into
// dist/src/cli/bin.js, which bin/preflight.js runs, with `check` (the checks, picomatch, picocolors),
// `worker` (the worker, execa, pino, zod, prom-client) and `coordinator` (hono, drizzle, postgres.js and
// the rest) each in a chunk loaded when it runs. A few files to read and compile instead of hundreds of
// modules: the start-up of `preflight --version`, `preflight check`, `preflight worker` and `preflight
// coordinator` (docs/benchmarks.md, "CLI start-up"). The other commands stay the modules tsc wrote,
// beside it, imported when they run.
import { readdirSync, rmSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { build, type Plugin } from 'esbuild'

const CLI = join(import.meta.dirname, '../dist/src/cli')
// Not moved into a chunk. The coordinator's modules find the migrations and the assets from a chunk
// (dist/src/cli/) as from their own place (migrate.ts, docs.ts, pglite-datadir.ts look in both).
const LAZY = [
  'migrate',
  'token',
  'reports',
  'dispatches',
  'dispatches-create',
  'explain',
  'subagents',
  'learn',
]

// Modules left beside the bundle when the CLI's own modules import them, by a path relative to
// dist/src/cli/ (where the chunks are): chosen by the file an import resolves to, not by its text (the
// contract's own `./dispatches.js` is not the command's). The worker's contract is bundled whole.
const BESIDE = [
  ...LAZY.map((name) => join(CLI, `${name}.js`)),
  // one UsageError class for the bundle and the modules beside it (main tells bad input by it)
  join(CLI, 'errors.js'),
  // zod, loaded by `check` only when a requirements file is not plainly valid or is a whole definition
  join(CLI, '../contract/requirements.js'),
  join(CLI, '../contract/definition.js'),
]

function besideTheBundle(): Plugin {
  return {
    name: 'beside-the-bundle',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const file = resolve(dirname(args.importer), args.path)
        if (dirname(args.importer) !== CLI || !BESIDE.includes(file)) return undefined
        const path = relative(CLI, file)
        return { path: path.startsWith('../') ? path : `./${path}`, external: true }
      })
    },
  }
}

// the chunks of an earlier build (their names hold a hash)
for (const file of readdirSync(CLI)) if (/^bin(-.*)?\.js$/.test(file)) rmSync(join(CLI, file))

await build({
  entryPoints: [join(CLI, 'main.js')],
  outdir: CLI,
  entryNames: 'bin',
  // `check` and `worker` in chunks of their own: --version and --help read neither
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
  plugins: [besideTheBundle()],
  // PGlite reads its wasm and data files beside its own module (and is imported only when it runs)
  external: ['@electric-sql/pglite'],
  // commander, picomatch and pino are CommonJS: their require() of node: modules needs a real require
  // (under a name no bundled module declares)
  banner: {
    js: "import { createRequire as __preflightRequire } from 'node:module'; const require = __preflightRequire(import.meta.url);",
  },
})
