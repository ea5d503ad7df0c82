// The import graph points one way: the CLI may use everything, the worker the client, the contract and
// the log, the coordinator the contract and the log, the client the contract only (it is published as
// preflight/client), and the contract and the log nothing outside themselves. Read from the relative
// imports of every .ts and .tsx file.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

const LAYERS = ['src/contract', 'src/log', 'src/client', 'src/coordinator', 'src/cli', 'worker'] as const
type Layer = (typeof LAYERS)[number]

const allowed: Record<Layer, readonly Layer[]> = {
  'src/cli': ['src/cli', 'src/coordinator', 'worker', 'src/client', 'src/contract', 'src/log'],
  'src/coordinator': ['src/coordinator', 'src/contract', 'src/log'],
  worker: ['worker', 'src/client', 'src/contract', 'src/log'],
  'src/client': ['src/client', 'src/contract'],
  'src/contract': ['src/contract'],
  'src/log': ['src/log'],
}

interface Import {
  // both relative to the repository root
  file: string
  target: string
  // as written in the file
  specifier: string
}

// `from '…'` (import and export), `import '…'` and `import('…')`, relative specifiers only.
const SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) => join(dir, name))
}

function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8')
  return [...text.matchAll(SPECIFIER)].map(([, specifier]) => ({
    file,
    specifier: specifier as string,
    target: relative(root, resolve(root, dirname(file), specifier as string)),
  }))
}

const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`)
const layerOf = (path: string): Layer | undefined => LAYERS.find((layer) => under(path, layer))

const imports = [...sourceFiles('src'), ...sourceFiles('worker')].flatMap(importsOf)
const show = (i: Import) => `${i.file} imports '${i.specifier}'`

describe('import graph', () => {
  it('reads the relative imports of every source file, the operator pages (.tsx) included', () => {
    // a regex that matched nothing, or a filter that dropped a kind of file, would pass every rule below
    expect(imports.length).toBeGreaterThan(100)
    expect(imports.some((i) => i.file.endsWith('.tsx'))).toBe(true)
    expect(imports.filter((i) => layerOf(i.file) === undefined).map(show)).toEqual([])
  })

  it('points from the CLI to the coordinator and the worker, from the worker to the client, and from each to the contract and the log only', () => {
    const wrong = imports
      .filter((i) => {
        const to = layerOf(i.target)
        return to === undefined || !allowed[layerOf(i.file) as Layer].includes(to)
      })
      .map((i) => `${show(i)} (${layerOf(i.file)} → ${layerOf(i.target) ?? i.target})`)
    expect(wrong).toEqual([])
  })

  // Directions inside a part, each with why.
  it.each([
    // db/ returns rows and booleans; what they mean for a request (a 404, a 409) is dispatch/'s and http/'s.
    ['src/coordinator/db', 'src/coordinator/http'],
    // run/ runs programs (git, setup, the agent); checks/ judges the workspace with it, never the reverse.
    ['worker/run', 'worker/checks'],
    // http/ is the transport every route uses (errors, auth, limits, metrics); the routes sit on it.
    ['src/coordinator/http', 'src/coordinator/routes'],
  ])('keeps %s/ free of %s/', (from, to) => {
    expect(imports.filter((i) => under(i.file, from) && under(i.target, to)).map(show)).toEqual([])
  })

  // A page of /ui renders what its route hands it: reading the database, sessions and HTTP is
  // ui/routes.tsx's (and session.ts's), so a page cannot run a query of its own as it renders.
  it('keeps the /ui pages to the contract and each other', () => {
    const page = (file: string) => /^src\/coordinator\/ui\/(?!routes\.tsx$|session\.ts$)/.test(file)
    const wrong = imports.filter((i) => page(i.file) && !page(i.target) && !under(i.target, 'src/contract'))
    expect(imports.filter((i) => page(i.file)).length).toBeGreaterThan(5)
    expect(wrong.map(show)).toEqual([])
  })
})
