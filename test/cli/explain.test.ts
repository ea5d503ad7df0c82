// `preflight explain CODE`: the entry of every reason code and every dispatch status, and near matches
// for a word it does not know.
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { EXPLAINED, formatEntry } from '../../src/cli/explain.js'
import { nearest } from '../../src/cli/nearest.js'
import { DISPATCH_STATUSES, REASON_CODES } from '../../src/contract/index.js'
import { TROUBLESHOOTING } from '../../src/contract/troubleshooting.js'
import { colours } from '../../src/log/colour.js'
import { runCli } from '../support/cli.js'

const BIN = fileURLToPath(new URL('../../bin/preflight.js', import.meta.url))
const codes = Object.keys(TROUBLESHOOTING)

describe('nearest', () => {
  it.each([
    ['no-mach', ['no-match']],
    ['not-fuond', ['not-found']],
    ['clone-fail', ['clone-failed']],
    ['timeout', ['timeout', 'setup-timeout']],
    ['FAULT', []],
    ['disk-full', []],
  ])('finds for %s: %j', (code, want) => {
    expect(nearest(code, codes).slice(0, want.length)).toEqual(want)
    if (want.length === 0) expect(nearest(code, codes)).toEqual([])
  })

  it('names at most three', () => {
    expect(nearest('setup', codes).length).toBeLessThanOrEqual(3)
  })
})

describe('formatEntry', () => {
  it('says where the code is seen, what it means and what to look at', () => {
    const text = formatEntry('not-found', TROUBLESHOOTING['not-found'] as never)
    expect(text.split('\n')[0]).toBe(
      'not-found — a result that is unmet (exec requirement): the workspace is not as declared',
    )
    expect(text).toContain("No executable regular file of that name on the agent's PATH.")
    expect(text).toContain('What to look at:\nThe toolchain image;')
    expect(Math.max(...text.split('\n').map((l) => l.length))).toBeLessThanOrEqual(100)
  })

  it('leaves out what to look at when the entry has nothing', () => {
    expect(formatEntry('has-history', TROUBLESHOOTING['has-history'] as never)).not.toContain(
      'What to look at',
    )
  })
})

describe('preflight explain', () => {
  it('prints the entry of a reason code', async () => {
    const r = await runCli(['explain', 'setup-timeout'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('setup-timeout — the reason of a setup_failed dispatch')
  })

  it.each([...DISPATCH_STATUSES])('explains the status %s', async (status) => {
    const r = await runCli(['explain', status])
    expect(r).toMatchObject({ exitCode: 0, stderr: '' })
    expect(r.stdout.split('\n')[0]).toBe(`${status} — a dispatch status`)
    expect(r.stdout.split('\n')[2]?.length).toBeGreaterThan(10)
  })

  const reasons = [...REASON_CODES]
  it.each(reasons)('explains the reason code %s', async (code) => {
    const r = await runCli(['explain', code])
    expect(r).toMatchObject({ exitCode: 0, stderr: '' })
    expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^${code} — .+`))
    expect(r.stdout.split('\n')[2]?.length).toBeGreaterThan(10)
  })

  it('knows nothing but the reasons and the statuses', () => {
    expect(Object.keys(EXPLAINED).sort()).toEqual([...new Set([...reasons, ...DISPATCH_STATUSES])].sort())
  })

  it.each(['preflight-failed', 'constructor', 'toString', ''])(
    'exits 2 with one line for %j, which is neither',
    async (word) => {
      const r = await runCli(['explain', word])
      expect(r).toMatchObject({ exitCode: 2, stdout: '' })
      expect(r.stderr).toMatch(new RegExp(`^preflight: unknown reason "${word}"; [^\n]+\n$`))
    },
  )

  it('names the status nearest to a misspelt one', async () => {
    expect((await runCli(['explain', 'preflight-failed'])).stderr).toMatch(
      /^preflight: unknown reason "preflight-failed"; did you mean .*\bpreflight_failed\?\n$/,
    )
  })

  // the real binary's exit status
  it('exits 2 with one line naming the near matches of an unknown code', async () => {
    const r = await execa(process.execPath, [BIN, 'explain', 'setup-timout'], { reject: false })
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toEqual([
      'preflight: unknown reason "setup-timout"; did you mean setup-timeout?',
    ])
  })
})

// Colour on a terminal: the decision (log/colour.ts wantsColour) as the command takes it, stdout made a
// terminal in this process; the binary's stdout is a pipe.
describe('preflight explain in colour', () => {
  const plain = { NO_COLOR: undefined, FORCE_COLOR: undefined, TERM: 'xterm-256color' }
  const red = colours(true).red

  async function onTerminal(env: Record<string, string | undefined>) {
    const had = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY')
    Object.defineProperty(process.stdout, 'isTTY', { value: true, configurable: true })
    try {
      return await runCli(['explain', 'preflight_failed'], env)
    } finally {
      if (had) Object.defineProperty(process.stdout, 'isTTY', had)
      else Reflect.deleteProperty(process.stdout, 'isTTY')
    }
  }

  it('paints the status it explains on a terminal', async () => {
    const r = await onTerminal(plain)
    expect(r.stdout.split('\n')[0]).toBe(`${red('preflight_failed')} — a dispatch status`)
  })

  it('paints a reason as where it is seen: an unmet result’s in red', () => {
    const painted = formatEntry('not-found', TROUBLESHOOTING['not-found'] as never, colours(true))
    expect(painted.startsWith(`${red('not-found')} — `)).toBe(true)
  })

  it('leaves it plain on a terminal with NO_COLOR, even with FORCE_COLOR', async () => {
    const r = await onTerminal({ ...plain, NO_COLOR: '1', FORCE_COLOR: '1' })
    expect(r.stdout.split('\n')[0]).toBe('preflight_failed — a dispatch status')
  })

  it('leaves it plain off a terminal, unless FORCE_COLOR', async () => {
    const piped = await execa(process.execPath, [BIN, 'explain', 'preflight_failed'], {
      env: { ...plain, PATH: process.env.PATH },
      extendEnv: false,
    })
    expect(piped.stdout.split('\n')[0]).toBe('preflight_failed — a dispatch status')
    const forced = await execa(process.execPath, [BIN, 'explain', 'preflight_failed'], {
      env: { ...plain, FORCE_COLOR: '1', PATH: process.env.PATH },
      extendEnv: false,
    })
    expect(forced.stdout.split('\n')[0]).toBe(`${red('preflight_failed')} — a dispatch status`)
  })
})
