// The command line itself, in process (main() as the binary runs it, stdout and stderr captured): help
// for every command, --version, "did you mean" for commands, options and requirement keys, and bad input
// as exit 2 with one line. A few cases spawn the real binary (its exit codes, --version from package.json).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { COMMANDS, type Spec } from '../../src/cli/commands.js'
import { formatDuration } from '../../src/cli/duration.js'
import { COORDINATOR_FLAGS, type Flag } from '../../src/cli/flags.js'
import { defaultConfig } from '../../src/coordinator/config.js'
import { runCli } from '../support/cli.js'

const ROOT = join(import.meta.dirname, '../..')
const BIN = join(ROOT, 'bin/preflight.js')
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
const dir = mkdtempSync(join(tmpdir(), 'preflight-help-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { exitCode, stdout, stderr } = await runCli(argv)
  return { code: exitCode, stdout, stderr }
}

// Every command path: ['check'], ['token'], ['token', 'create'], …
function paths(specs: Record<string, Spec>, path: string[] = []): [string[], Spec][] {
  return Object.entries(specs).flatMap(([name, spec]) => [
    [[...path, name], spec] as [string[], Spec],
    ...paths(spec.commands ?? {}, [...path, name]),
  ])
}

// A flag's help as the table says it: what it is, its default, the variables read without it in order.
function helpLine(f: Flag): string {
  const fallback = [
    ...(f.default ? [`default: ${f.default}`] : []),
    ...(f.env ? [`env: ${f.env.join(', ')}`] : []),
  ]
  return fallback.length ? `${f.help} (${fallback.join('; ')})` : f.help
}

const expectOneLine = (r: { code: number; stdout: string; stderr: string }) => {
  expect(r.code).toBe(2)
  expect(r.stdout).toBe('')
  expect(r.stderr.trim().split('\n')).toHaveLength(1)
  expect(r.stderr).toMatch(/^preflight: /)
}

describe('--help', () => {
  const all = paths(COMMANDS)

  it('covers every command of the CLI', () => {
    expect(all.map(([path]) => path.join(' '))).toEqual([
      'check',
      'coordinator',
      'worker',
      'migrate',
      'token',
      'token create',
      'token list',
      'token revoke',
      'subagents',
      'subagents apply',
      'reports',
      'dispatches',
      'dispatches create',
      'dispatches list',
      'dispatches show',
      'dispatches wait',
      'dispatches cancel',
      'dispatches retry',
      'dispatches watch',
      'explain',
      'learn',
    ])
  })

  it.each(all.map(([path, spec]) => [path.join(' '), path, spec] as const))(
    'preflight %s --help: its flags, environment, an example and its exit codes',
    async (_name, path, spec) => {
      const r = await cli(...path, '--help')
      expect(r.code).toBe(0)
      expect(r.stderr).toBe('')
      expect(r.stdout).toContain(`Usage: preflight ${path.join(' ')}`)
      // commander wraps the help lines: compared with the spaces collapsed
      const flat = r.stdout.replace(/\s+/g, ' ')
      for (const [flag, f] of Object.entries(spec.flags ?? {}))
        if (f.hidden) expect(r.stdout).not.toContain(`--${flag} `)
        else
          expect(flat).toContain(
            `${f.short ? `-${f.short}, ` : ''}--${flag}${f.arg ? ` <${f.arg}>` : ''} ${helpLine(f)}`,
          )
      expect(r.stdout).toContain('Environment:')
      const variables = [
        ...Object.keys(spec.env ?? {}),
        ...Object.values(spec.flags ?? {}).flatMap((f) => f.env ?? []),
      ]
      for (const name of variables) expect(r.stdout).toMatch(new RegExp(`\n  ${name} +\\S`))
      expect(r.stdout).toContain('PREFLIGHT_DEBUG')
      expect(r.stdout).toMatch(new RegExp(`Example:\\n  \\$ .*preflight ${path[0]}`))
      expect(r.stdout).toMatch(/Exit codes:\n {2}0 {2}.+\n(?: {2}1 {2}.+\n)? {2}2 {2}.+/)
    },
  )

  it('the top level lists every command, and -h and `help COMMAND` say the same as --help', async () => {
    const top = await cli('--help')
    expect(top.code).toBe(0)
    for (const name of Object.keys(COMMANDS)) expect(top.stdout).toMatch(new RegExp(`\\n  ${name}\\b`))
    expect((await cli('-h')).stdout).toBe(top.stdout)
    expect((await cli('help', 'worker')).stdout).toBe((await cli('worker', '--help')).stdout)
    expect((await cli('dispatches', '--help')).stdout).toMatch(/list[\s\S]*show[\s\S]*cancel[\s\S]*watch/)
  })

  it('gives one meaning to a flag name: the same value placeholder in every command', () => {
    const seen = new Map<string, string>()
    for (const [path, spec] of all)
      for (const [flag, f] of Object.entries(spec.flags ?? {})) {
        if (f.hidden) continue
        const arg = f.arg ?? '(switch)'
        expect(`${flag} ${seen.get(flag) ?? arg}`, path.join(' ')).toBe(`${flag} ${arg}`)
        seen.set(flag, arg)
      }
    expect(seen.get('subagent')).toBe('NAME')
  })
})

describe('the defaults the help shows', () => {
  it('are the coordinator’s own', () => {
    const shown = (flag: keyof typeof COORDINATOR_FLAGS) => (COORDINATOR_FLAGS[flag] as Flag).default
    const c = defaultConfig
    expect({
      'lease-ms': shown('lease-ms'),
      'max-attempts': shown('max-attempts'),
      'sweep-ms': shown('sweep-ms'),
      'claim-wait-cap-ms': shown('claim-wait-cap-ms'),
      'priority-aging-ms': shown('priority-aging-ms'),
      'request-timeout-ms': shown('request-timeout-ms'),
      'max-connections': shown('max-connections'),
      'headers-timeout-ms': shown('headers-timeout-ms'),
      'receive-timeout-ms': shown('receive-timeout-ms'),
      'keep-alive-timeout-ms': shown('keep-alive-timeout-ms'),
      'long-polls-per-token': shown('long-polls-per-token'),
      'streams-per-token': shown('streams-per-token'),
    }).toEqual({
      'lease-ms': formatDuration(c.leaseMs),
      'max-attempts': String(c.maxAttempts),
      'sweep-ms': formatDuration(c.sweepIntervalMs),
      'claim-wait-cap-ms': formatDuration(c.claimWaitCapMs),
      'priority-aging-ms': formatDuration(c.priorityAgingMs),
      'request-timeout-ms': formatDuration(c.requestTimeoutMs),
      'max-connections': String(c.maxConnections),
      'headers-timeout-ms': formatDuration(c.headersTimeoutMs),
      'receive-timeout-ms': formatDuration(c.receiveTimeoutMs),
      'keep-alive-timeout-ms': formatDuration(c.keepAliveTimeoutMs),
      'long-polls-per-token': String(c.longPollsPerToken),
      'streams-per-token': String(c.streamsPerToken),
    })
  })
})

describe('docs/cli.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8')
  // the table of commands: one row per command, its name in backticks first
  const rows = doc.split('\n').filter((line) => line.startsWith('| `'))

  it.each(
    paths(COMMANDS)
      .filter(([, spec]) => spec.run)
      .map(([path]) => path.join(' ')),
  )('has a row for preflight %s', (name) => {
    expect(rows.some((row) => row.startsWith(`| \`${name}\``) || row.startsWith(`| \`${name} `))).toBe(true)
  })
})

describe('--version', () => {
  it('prints the version of package.json, in process and from the binary', async () => {
    expect(await cli('--version')).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' })
    const run = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' })
    expect([run.status, run.stdout, run.stderr]).toEqual([0, `${VERSION}\n`, ''])
  })
})

describe('did you mean', () => {
  it.each([
    [['chek'], "unknown command 'chek'; did you mean check?"],
    [['dispatches', 'lst'], "unknown command 'lst'; did you mean list?"],
    [['check', '--worksapce', '.'], "unknown option '--worksapce'; did you mean --workspace?"],
    [['reports', '--outcom', 'met'], "unknown option '--outcom'; did you mean --outcome?"],
  ])('%j: exit 2, one line naming the nearest', async (argv, says) => {
    const r = await cli(...argv)
    expectOneLine(r)
    expect(r.stderr).toBe(`preflight: ${says}\n`)
  })

  it.each([
    [{ exex: ['node'] }, '(top level): Unrecognized key: "exex"; did you mean "exec"?'],
    [{ git: { worktre: true } }, 'git: Unrecognized key: "worktre"; did you mean "worktree"?'],
    [{ paths: ['a'], zzz: 1 }, '(top level): Unrecognized key: "zzz"'],
  ])('an unknown requirement key %j names the nearest known one', async (requires, says) => {
    const file = join(dir, 'requires.json')
    writeFileSync(file, JSON.stringify(requires))
    const r = await cli('check', '--workspace', dir, '--requires', file)
    expectOneLine(r)
    expect(r.stderr).toBe(`preflight: ${file} is not valid at ${says}\n`)
  })

  it('an unknown key in a whole definition names the nearest too', async () => {
    const file = join(dir, 'subagent.json')
    writeFileSync(
      file,
      JSON.stringify({ name: 'a', agent: { command: ['x'] }, contextRequires: { pths: [] } }),
    )
    const r = await cli('check', '--workspace', dir, '--subagent-file', file)
    expectOneLine(r)
    expect(r.stderr).toContain('contextRequires: Unrecognized key: "pths"; did you mean "paths"?')
  })
})

describe('bad input on the command line', () => {
  it.each([
    [[], 'give a command: preflight check|coordinator|'],
    [['dispatches'], 'give a command: preflight dispatches create|list|show|wait|cancel|retry|watch'],
    [['token'], 'give a command: preflight token create|list|revoke'],
    [['dispatches', 'show'], "missing required argument 'ID'"],
    [['token', 'revoke', '1', '2'], 'too many arguments'],
    [['check', '--workspace'], "option '--workspace <DIR>' argument missing"],
    [['explain'], "missing required argument 'REASON'"],
  ])('%j: exit 2, one line', async (argv, says) => {
    const r = await cli(...argv)
    expectOneLine(r)
    expect(r.stderr).toContain(says)
  })

  it('the binary exits 2 with the same line', () => {
    const run = spawnSync(process.execPath, [BIN, 'chek'], { encoding: 'utf8' })
    expect([run.status, run.stdout, run.stderr]).toEqual([
      2,
      '',
      "preflight: unknown command 'chek'; did you mean check?\n",
    ])
  })

  it('check --subagent FILE still works, with a note that it is now --subagent-file', async () => {
    const file = join(dir, 'old.json')
    writeFileSync(file, JSON.stringify({ name: 'a', agent: { command: ['x'] }, contextRequires: {} }))
    const r = await cli('check', '--workspace', dir, '--subagent', file, '--format', 'json')
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('preflight: --subagent FILE is deprecated: use --subagent-file FILE\n')
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'met', declared: false })
  })
})
