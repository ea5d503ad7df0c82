// `preflight check` as users run it: the real binary, real workspaces, its own environment as the agent's.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { describe, expect, it, vi } from 'vitest'
import { ROOT_NOTE, run as runCheck } from '../../src/cli/check.js'
import { repoWithCommit, sharedDir, testDir, write } from '../support/checks.js'
import { runCli } from '../support/cli.js'
import { promisorTrap } from '../support/git-fixtures.js'
import { SCHEMAS, validate } from '../support/junit-schemas.js'

const BIN = join(import.meta.dirname, '../../bin/preflight.js')
const PATH = process.env.PATH ?? ''

function check(args: string[], env: Record<string, string> = { PATH }) {
  const run = spawnSync(process.execPath, [BIN, 'check', ...args], { env, encoding: 'utf8' })
  return { code: run.status, stdout: run.stdout, stderr: run.stderr }
}

function requiresFile(body: unknown): string {
  const file = join(testDir(), 'requires.json')
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body))
  return file
}

describe('preflight check', () => {
  it('exits 0 when every requirement is met', () => {
    const ws = repoWithCommit()
    const run = check([
      '--workspace',
      ws,
      '--requires',
      requiresFile({ paths: ['README.md'], exec: ['sh'], git: { worktree: true } }),
    ])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^met +paths +README\.md/m)
  })

  it('exits 1 and lists unmet requirements first in text', () => {
    const ws = testDir()
    write(ws, 'package.json')
    const run = check([
      '--workspace',
      ws,
      '--requires',
      requiresFile({ paths: ['package.json', 'pnpm-lock.yaml'] }),
    ])
    expect(run.code).toBe(1)
    const lines = run.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^unmet +paths +pnpm-lock\.yaml +no-match/)
    expect(lines[1]).toMatch(/^met +paths +package\.json/)
  })

  it('prints the report shape plus workspace with --format json', () => {
    const ws = testDir()
    const run = check(['--workspace', ws, '--requires', requiresFile({ exec: ['sh'] }), '--format', 'json'])
    const report = JSON.parse(run.stdout)
    expect(Object.keys(report).sort()).toEqual([
      'declared',
      'finishedAt',
      'outcome',
      'results',
      'startedAt',
      'workspace',
    ])
    expect(report).toMatchObject({ outcome: 'met', declared: true, workspace: ws })
    expect(report.results[0]).toMatchObject({
      kind: 'exec',
      requirement: 'sh',
      status: 'met',
      observed: { name: 'sh' },
    })
  })

  it('prints one testcase per requirement and a failure for each unmet one with --format junit, escaped', () => {
    const ws = testDir()
    write(ws, 'a&b.txt')
    const run = check([
      '--workspace',
      ws,
      '--requires',
      requiresFile({ paths: ['a&b.txt', 'x<y>"z".txt'] }),
      '--format',
      'junit',
    ])
    expect(run.code).toBe(1)
    expect(run.stdout.match(/<testcase /g)).toHaveLength(2)
    expect(run.stdout.match(/<failure /g)).toHaveLength(1)
    expect(run.stdout).toContain('name="a&amp;b.txt"')
    expect(run.stdout).toContain('name="x&lt;y&gt;&quot;z&quot;.txt"')
  })

  // A met, an unmet and an error result (git is not on its PATH), as a CI job would get them.
  function mixedRun(
    format: string,
    extra: string[] = [],
    env: Record<string, string> = { PATH: '/nonexistent' },
  ) {
    const ws = testDir()
    write(ws, 'README.md')
    const requires = requiresFile({ paths: ['README.md', 'nothing-here'], git: { worktree: true } })
    return check(['--workspace', ws, '--requires', requires, '--format', format, ...extra], env)
  }

  it('prints JUnit that counts failures and errors apart and is valid against the Ant and Jenkins schemas', () => {
    const run = mixedRun('junit')
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/<testsuite [^>]*tests="3" failures="1" errors="1"/)
    expect(run.stdout).toMatch(/<error message="error: git-unavailable: [^"]+" type="git-unavailable">/)
    for (const xsd of Object.values(SCHEMAS))
      expect(validate(run.stdout, xsd)).toEqual({ ok: true, said: '' })
  })

  it('prints JSON valid against schemas/check-report.schema.json, for met, unmet and error results', () => {
    const schema = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../schemas/check-report.schema.json'), 'utf8'),
    )
    const ajv = new Ajv2020({ strict: true, allErrors: true })
    addFormats.default(ajv)
    const valid = ajv.compile(schema)
    const report = JSON.parse(mixedRun('json').stdout)
    expect(report.results.map((r: { status: string }) => r.status).sort()).toEqual(['error', 'met', 'unmet'])
    expect(valid(report), ajv.errorsText(valid.errors)).toBe(true)
    // and the schema does hold it to the shape
    expect(valid({ ...report, worker: { id: 'w' } })).toBe(false)
    expect(valid({ ...report, startedAt: 'yesterday' })).toBe(false)
  })

  it('writes the report to --output FILE by replacing it whole, prints nothing, and exits with the verdict', () => {
    const dir = testDir()
    const file = join(dir, 'report.xml')
    writeFileSync(file, 'an older report')
    const before = statSync(file).ino
    const run = mixedRun('junit', ['--output', file])
    expect(run).toMatchObject({ code: 1, stdout: '' })
    expect(validate(readFileSync(file, 'utf8'), SCHEMAS.ant)).toMatchObject({ ok: true })
    // renamed into place, never written over: a reader has the old report or the new one
    expect(statSync(file).ino).not.toBe(before)
    expect(readdirSync(dir)).toEqual(['report.xml'])
  })

  it('exits 2 for --output into a directory that does not exist, and writes nothing', () => {
    const dir = testDir()
    const run = mixedRun('json', ['--output', join(dir, 'missing', 'r.json')])
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toContain('its directory does not exist')
    expect(readdirSync(dir)).toEqual([])
  })

  // NO_COLOR's precedence over FORCE_COLOR, and no colour off a terminal: test/log/colour.test.ts
  it('colours text with FORCE_COLOR', () => {
    expect(mixedRun('text', [], { PATH: '/nonexistent', FORCE_COLOR: '1' }).stdout).toContain(
      '\u001b[31munmet',
    )
  })

  it('reads contextRequires from a whole definition with --subagent', () => {
    const ws = testDir()
    const file = requiresFile({
      name: 'fixer',
      agent: { command: ['true'] },
      contextRequires: { paths: ['nothing-here'] },
    })
    expect(check(['--workspace', ws, '--subagent', file]).code).toBe(1)
  })

  it('answers met with nothing declared for a definition without contextRequires', () => {
    const file = requiresFile({ name: 'fixer', agent: { command: ['true'] } })
    const run = check(['--workspace', testDir(), '--subagent', file, '--format', 'json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'met', declared: false, results: [] })
  })

  it('resolves exec on its own PATH', () => {
    const bin = testDir()
    write(bin, 'pnpm', '#!/bin/sh\n', 0o755)
    const file = requiresFile({ exec: ['pnpm'] })
    expect(check(['--workspace', testDir(), '--requires', file], { PATH: `${bin}:${PATH}` }).code).toBe(0)
    expect(check(['--workspace', testDir(), '--requires', file], { PATH }).code).toBe(1)
  })

  it('keeps its own GIT_DIR from reaching git', () => {
    const other = repoWithCommit()
    const ws = testDir()
    const env = { PATH, GIT_DIR: join(other, '.git'), GIT_WORK_TREE: ws }
    // git itself, handed that environment, would call the workspace a worktree
    expect(
      execFileSync('git', ['-C', ws, 'rev-parse', '--is-inside-work-tree'], { env, encoding: 'utf8' }).trim(),
    ).toBe('true')
    const run = check(
      ['--workspace', ws, '--requires', requiresFile({ git: { worktree: true } }), '--format', 'json'],
      env,
    )
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout).results[0]).toMatchObject({ status: 'unmet', reason: 'not-a-worktree' })
  })
})

// --as-uid judges as the worker's verify step does for its --agent-uid (worker/checks/access.ts); as root
// without it, the text report says that root's view is not an agent's.
describe('preflight check --as-uid', () => {
  // a uid that owns nothing here, whoever runs the tests
  const other = String(process.getuid?.() === 54_321 ? 54_322 : 54_321)

  it('judges exec for that uid: a program only its owner may run is not found for it', () => {
    const bin = sharedDir()
    write(bin, 'shared', '#!/bin/sh\n', 0o755)
    write(bin, 'private', '#!/bin/sh\n', 0o700)
    const env = { PATH: `${bin}:${PATH}` }
    const file = requiresFile({ exec: ['shared', 'private'] })
    const own = check(['--workspace', sharedDir(), '--requires', file, '--format', 'json'], env)
    expect(own.code).toBe(0)
    const run = check(
      ['--workspace', sharedDir(), '--requires', file, '--format', 'json', '--as-uid', other],
      env,
    )
    expect(run.code).toBe(1)
    const [shared, mine] = JSON.parse(run.stdout).results
    expect(shared).toMatchObject({ requirement: 'shared', status: 'met' })
    expect(mine).toMatchObject({ requirement: 'private', status: 'unmet', reason: 'not-found' })
    expect(mine.observed.rejected).toContainEqual(expect.objectContaining({ path: join(bin, 'private') }))
  })

  it.each(['-1', 'root', '2147483647'])('refuses --as-uid %s: exit 2, one line', (uid) => {
    const run = check(['--workspace', testDir(), '--requires', requiresFile({}), '--as-uid', uid])
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(`preflight: --as-uid must be a whole number from 0 to 2147483646, got "${uid}"\n`)
  })

  // the uid is passed to run(): the note's rule whoever runs the tests
  const text = async (values: Record<string, string>, uid: number) => {
    const file = requiresFile({ exec: ['sh'] })
    let out = ''
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk)
      return true
    })
    try {
      await runCheck({ workspace: testDir(), requires: file, ...values }, uid)
    } finally {
      spy.mockRestore()
    }
    return out
  }

  it('notes in text that root judged, when root runs it without --as-uid', async () => {
    expect((await text({}, 0)).trimEnd().split('\n').at(-1)).toBe(ROOT_NOTE)
    expect(await text({ 'as-uid': other }, 0)).not.toContain(ROOT_NOTE)
    expect(await text({}, 1000)).not.toContain(ROOT_NOTE)
    expect(JSON.parse(await text({ format: 'json' }, 0))).toMatchObject({ outcome: 'met' })
  })

  it.runIf(process.getuid?.() === 0)('the binary run as root says it too', () => {
    const run = check(['--workspace', testDir(), '--requires', requiresFile({ exec: ['sh'] })])
    expect(run.code).toBe(0)
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(ROOT_NOTE)
  })
})

describe('preflight check: bad input exits 2 with one sentence on stderr', () => {
  const cases: [string, (ws: string) => string[], RegExp][] = [
    [
      'an invalid requirement, naming the file and the issue path',
      (ws) => ['--workspace', ws, '--requires', requiresFile({ paths: ['ok', '../up'] })],
      /requires\.json is not valid at paths\.1: .*"\.\."/,
    ],
    [
      'an unknown key',
      (ws) => ['--workspace', ws, '--requires', requiresFile({ path: ['x'] })],
      /requires\.json is not valid/,
    ],
    [
      'a file that is not JSON',
      (ws) => ['--workspace', ws, '--requires', requiresFile('{nope')],
      /requires\.json is not valid JSON/,
    ],
    [
      'a file that does not exist',
      (ws) => ['--workspace', ws, '--requires', join(ws, 'missing.json')],
      /cannot read .*missing\.json/,
    ],
    ['no --workspace', () => ['--requires', requiresFile({})], /--workspace DIR is required/],
    [
      'both --requires and --subagent',
      (ws) => ['--workspace', ws, '--requires', 'a', '--subagent', 'b'],
      /exactly one of/,
    ],
    ['neither --requires nor --subagent', (ws) => ['--workspace', ws], /exactly one of/],
    [
      'a workspace that is not a directory',
      (ws) => ['--workspace', join(ws, 'nope'), '--requires', requiresFile({})],
      /is not a directory/,
    ],
    [
      'an unknown format',
      (ws) => ['--workspace', ws, '--requires', requiresFile({}), '--format', 'xml'],
      /--format must be one of/,
    ],
    [
      'a bad --timeout-ms',
      (ws) => ['--workspace', ws, '--requires', requiresFile({}), '--timeout-ms', '-5'],
      /--timeout-ms/,
    ],
    ['an unknown flag', (ws) => ['--workspace', ws, '--fast'], /--fast/],
  ]
  // in this process (test/support/cli.ts): the binary's exit 2 is held by the last case below
  it.each(cases)('rejects %s', async (_name, args, message) => {
    const run = await runCli(['check', ...args(testDir())])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toMatch(message)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stdout).toBe('')
  })

  it('takes --timeout-ms as a duration: with a unit, or milliseconds', async () => {
    const ws = testDir()
    write(ws, 'README.md')
    const requires = requiresFile({ paths: ['README.md'] })
    for (const timeout of ['5s', '1m', '250ms', '10000']) {
      const run = await runCli(['check', '--workspace', ws, '--requires', requires, '--timeout-ms', timeout])
      expect([run.exitCode, run.stderr]).toEqual([0, ''])
    }
  })

  it.each(['uploadpack', 'sshCommand'] as const)(
    "never runs a command from the workspace's git config: a promisor remote's %s",
    async (via) => {
      const marker = join(testDir(), 'fetched')
      const ws = await promisorTrap(via, marker)
      try {
        const run = check(['--workspace', ws, '--requires', requiresFile({ git: { history: true } })])
        expect(run.code).toBe(1)
        expect(existsSync(marker)).toBe(false)
      } finally {
        rmSync(ws, { recursive: true, force: true })
      }
    },
  )

  it('refuses a requirements file that is not a small regular file, in one line, exit 2', () => {
    const big = join(testDir(), 'big.json')
    writeFileSync(big, `{"paths":["${'a'.repeat(1024 * 1024)}"]}`)
    for (const [file, says] of [
      ['/dev/zero', 'not a regular file'],
      [testDir(), 'not a regular file'],
      [big, 'larger than 1 MiB'],
    ]) {
      const run = check(['--workspace', testDir(), '--requires', file as string])
      expect(run.code).toBe(2)
      expect(run.stderr.trim().split('\n')).toHaveLength(1)
      expect(run.stderr).toContain(says)
    }
  })
})
