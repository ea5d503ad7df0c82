// Every route the coordinator answers is in the docs: each operation of its OpenAPI document as
// `METHOD /path` (parameters as `{name}`), and each of the operator pages' routes as `METHOD /ui/…`
// (parameters as `:name`, as hono names them), somewhere in README.md or docs/*.md.
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../support/app.js'

const METHODS = ['get', 'put', 'post', 'delete', 'patch']
const root = new URL('../../', import.meta.url)
const docs = [
  readFileSync(new URL('README.md', root), 'utf8'),
  ...readdirSync(new URL('docs/', root))
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(new URL(`docs/${f}`, root), 'utf8')),
].join('\n')

describe('the docs', () => {
  const h = useTestApp()

  it('name every operation of the API', async () => {
    const paths = (await h.call('GET', '/openapi.json', { role: null })).body.paths as Record<string, object>
    const operations = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    expect(operations.length).toBeGreaterThan(20)
    expect(operations.filter((op) => !docs.includes(op))).toEqual([])
  })

  it('name every route of the operator pages', () => {
    const routes = h.app.routes
      .filter((r) => r.path.startsWith('/ui') && r.method !== 'ALL' && !r.path.includes('*'))
      .map((r) => `${r.method} ${r.path}`)
    expect(routes.length).toBeGreaterThan(3)
    expect([...new Set(routes)].filter((r) => !docs.includes(r))).toEqual([])
  })
})
