// The built CLI (scripts/bundle-cli.ts, run by `npm run build`): what `preflight --version` and
// `preflight check` load before they answer is the bundle and node's own modules, never zod or a
// command they do not run; `preflight worker` and `preflight coordinator` load chunks of their own
// (docs/benchmarks.md, "CLI start-up").
import { readdirSync, readFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const CLI = join(import.meta.dirname, '../../dist/src/cli')

// The modules a file imports statically (loaded with it) and dynamically (loaded when a command runs).
function importsOf(file: string): { static: string[]; dynamic: string[] } {
  const text = readFileSync(join(CLI, file), 'utf8')
  return {
    static: [...text.matchAll(/(?:^|[;\s}])(?:import|export)\b[^;"'()]*?from\s*["']([^"']+)["']/g)].map(
      (m) => m[1] as string,
    ),
    dynamic: [...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] as string),
  }
}

// Everything loaded with `file`, following the bundle's own chunks.
function closure(file: string, seen = new Set<string>()): Set<string> {
  for (const spec of importsOf(file).static) {
    if (seen.has(spec)) continue
    seen.add(spec)
    if (/^\.\/bin-.*\.js$/.test(spec)) closure(spec.slice(2), seen)
  }
  return seen
}

const allowed = (spec: string) =>
  spec.startsWith('node:') || /^\.\/bin-.*\.js$/.test(spec) || spec === './errors.js'

describe('the bundled CLI', () => {
  const files = readdirSync(CLI).filter((f) => /^bin(-.*)?\.js$/.test(f))
  const checkChunk = importsOf('bin.js').dynamic.find((s) => /^\.\/bin-check-.*\.js$/.test(s))
  const workerChunk = importsOf('bin.js').dynamic.find((s) => /^\.\/bin-worker-.*\.js$/.test(s))
  const coordinatorChunk = importsOf('bin.js').dynamic.find((s) => /^\.\/bin-coordinator-.*\.js$/.test(s))

  it('starts with the bundle and node’s modules only', () => {
    expect([...closure('bin.js')].filter((s) => !allowed(s))).toEqual([])
  })

  it('runs check from a chunk of its own that loads no more than that, zod only when a file is not plainly valid', () => {
    expect(checkChunk).toBeDefined()
    const chunk = (checkChunk as string).slice(2)
    expect([...closure(chunk)].filter((s) => !allowed(s))).toEqual([])
    expect(importsOf(chunk).dynamic.sort()).toEqual([
      '../contract/definition.js',
      '../contract/requirements.js',
      'node:crypto',
    ])
  })

  it('holds no zod and no other command where --version, --help and check read', () => {
    const read = new Set(['bin.js', ...closure('bin.js'), ...closure((checkChunk as string).slice(2))])
    for (const file of files.filter((f) => read.has(f) || read.has(`./${f}`)))
      expect(readFileSync(join(CLI, file), 'utf8')).not.toMatch(/\$?Zod[A-Z]\w+|pino|hono/)
    const chunks = [checkChunk, workerChunk, coordinatorChunk]
    const lazy = importsOf('bin.js').dynamic.filter((s) => !chunks.includes(s))
    expect([...new Set(lazy)].sort()).toEqual(
      ['dispatches-create', 'dispatches', 'explain', 'learn', 'migrate', 'reports', 'subagents', 'token'].map(
        (c) => `./${c}.js`,
      ),
    )
  })

  it('holds no copy of UsageError: bad input from any command is the one class errors.js exports', () => {
    for (const file of files) expect(readFileSync(join(CLI, file), 'utf8')).not.toMatch(/class UsageError\b/)
  })

  it('runs worker from a chunk of its own that loads nothing beside the bundle but errors.js', () => {
    expect(workerChunk).toBeDefined()
    const chunk = (workerChunk as string).slice(2)
    expect([...closure(chunk)].filter((s) => !allowed(s))).toEqual([])
    expect(importsOf(chunk).dynamic.filter((s) => !s.startsWith('node:'))).toEqual([])
  })

  it('runs coordinator from a chunk of its own, PGlite imported only by the chunks that open it', () => {
    expect(coordinatorChunk).toBeDefined()
    const chunk = (coordinatorChunk as string).slice(2)
    // postgres.js names node's modules without node:
    expect([...closure(chunk)].filter((s) => !allowed(s) && !isBuiltin(s))).toEqual([])
    const dynamic = importsOf(chunk).dynamic.filter((s) => !s.startsWith('node:'))
    expect(dynamic.filter((s) => !/^\.\/bin-.*\.js$/.test(s))).toEqual(['@electric-sql/pglite'])
  })
})
