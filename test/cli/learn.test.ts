// `preflight learn`: real commands under the real tracer, a real definition to compare with, and a
// dispatch observed by its worker, read from a served coordinator. Without strace the traced cases skip,
// or fail with CI=true.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findTracer } from '../../worker/observe/trace.js'
import type { TestApp } from '../support/app.js'
import { tokens } from '../support/app.js'
import { runCli } from '../support/cli.js'
import { exited } from '../support/dispatch-states.js'
import { definition } from '../support/fixtures.js'
import { type Served, serveCoordinator } from '../support/served.js'

const traces = typeof findTracer() === 'object'
let ws: string

beforeAll(() => {
  ws = mkdtempSync(join(tmpdir(), 'preflight-learn-'))
  mkdirSync(join(ws, 'src'))
  writeFileSync(join(ws, 'package.json'), '{}\n')
  writeFileSync(join(ws, 'src', 'a.ts'), 'x\n')
  writeFileSync(
    join(ws, 'def.json'),
    JSON.stringify({ name: 'x', contextRequires: { exec: ['cat', 'make'], paths: ['package.json'] } }),
  )
})
afterAll(() => rmSync(ws, { recursive: true, force: true }))

const script =
  'cat package.json src/a.ts notes.md >/dev/null 2>&1; ls >/dev/null; pnpm-nowhere 2>/dev/null; exit 3'

describe.runIf(traces)('preflight learn -- COMMAND', () => {
  it('runs the command and suggests the requirements it used', async () => {
    const r = await runCli(['learn', '--workspace', ws, '--', 'sh', '-c', script])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('ran: sh -c cat package.json')
    expect(r.stdout).toContain('(exit 3), traced')
    expect(r.stdout).toContain('not found on any PATH entry: pnpm-nowhere')
    expect(r.stdout).toContain('opened and not there: notes.md')
    const json = await runCli(['learn', '--workspace', ws, '--format', 'json', '--', 'sh', '-c', script])
    const learned = JSON.parse(json.stdout)
    expect(learned.suggested.paths).toEqual(
      ['def.json', 'package.json', 'src/'].filter((p) => p !== 'def.json'),
    )
    expect(learned.suggested.exec).toEqual(expect.arrayContaining(['cat', 'ls', 'sh']))
    expect(learned.suggested.exec).not.toContain('pnpm-nowhere')
    expect(learned.from).toEqual({ trace: { command: ['sh', '-c', script], exitCode: 3 } })
  })

  it('with --against, says what was used and not declared (exit 1) and what was declared and not used', async () => {
    const r = await runCli([
      'learn',
      '--workspace',
      ws,
      '--against',
      join(ws, 'def.json'),
      '--format',
      'json',
      '--',
      'sh',
      '-c',
      script,
    ])
    expect(r.exitCode).toBe(1)
    const { against } = JSON.parse(r.stdout)
    expect(against.undeclared.paths).toEqual(['src/', 'notes.md'])
    expect(against.undeclared.exec).toEqual(expect.arrayContaining(['ls', 'sh', 'pnpm-nowhere']))
    expect(against.undeclared.exec).not.toContain('cat')
    expect(against.unused).toEqual({ exec: ['make'] })
    const covered = await runCli([
      'learn',
      '--workspace',
      ws,
      '--against',
      join(ws, 'def.json'),
      '--',
      'cat',
      'package.json',
    ])
    expect(covered.exitCode).toBe(0)
    expect(covered.stdout).toContain('used, and declared by no requirement: nothing')
  })
})

describe('preflight learn, refused', () => {
  it.each([
    [['learn'], 'give the command to learn from after --'],
    [['learn', '--format', 'yaml', '--', 'true'], '--format is text or json'],
    [['learn', '--from', 'abcd', '--', 'true'], 'not both'],
    [['learn', '--against', '/nonexistent/def.json', '--', 'true'], 'def.json'],
  ])('%j', async (argv, message) => {
    const r = await runCli(argv)
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(message)
  })
})

describe('preflight learn --from', () => {
  let served: Served
  beforeAll(async () => {
    served = await serveCoordinator()
  })
  afterAll(() => served.stop())

  it('reads what a dispatch’s worker observed', async () => {
    const h = { call: served.request } as unknown as TestApp
    const observed = {
      source: 'trace' as const,
      exec: [{ name: 'node', path: '/usr/bin/node' }, { name: 'pnpm' }],
      paths: ['notes.md'],
    }
    const d = await exited(h, 127, { def: definition('learn-from'), more: { observed } })
    const r = await runCli([
      'learn',
      '--from',
      d.id.slice(0, 8),
      '--coordinator',
      served.server.url,
      '--token',
      tokens.operator,
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain(`dispatch ${d.id}, as its worker observed it (trace)`)
    expect(r.stdout).toContain('"exec": [\n    "node"\n  ]')
    expect(r.stdout).toContain('not found on any PATH entry: pnpm')
    const none = await exited(h, 0, { def: definition('learn-none') })
    const refused = await runCli([
      'learn',
      '--from',
      none.id,
      '--coordinator',
      served.server.url,
      '--token',
      tokens.operator,
    ])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain('has no observation')
  })
})
