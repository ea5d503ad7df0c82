// Reading flag values: where a value came from (the flag, else a variable) and the error that names it,
// whole numbers and durations, the log flags. Every `…-ms` flag of every command takes a duration.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  coordinatorUrl,
  durationFlag,
  durationSetting,
  intFlag,
  intSetting,
  setting,
  settingOf,
} from '../../src/cli/args.js'
import { COMMANDS, type Spec } from '../../src/cli/commands.js'
import { UsageError } from '../../src/cli/errors.js'
import { COORDINATOR_FLAGS } from '../../src/cli/flags.js'
import { logOptions } from '../../src/cli/log-options.js'
import { testDir } from '../support/checks.js'
import { runRefused } from '../support/cli.js'

const VARS = [
  'PREFLIGHT_LOG_LEVEL',
  'PREFLIGHT_LOG_FORMAT',
  'PREFLIGHT_LEASE_MS',
  'PREFLIGHT_PORT',
  'PORT',
  'PREFLIGHT_COORDINATOR',
  'PREFLIGHT_URL',
]
const saved = Object.fromEntries(VARS.map((name) => [name, process.env[name]]))
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

const unset = (...names: string[]) => {
  for (const name of names) delete process.env[name]
}

describe('setting', () => {
  it('takes the flag first, then the variables in order, each under the name an error gives', () => {
    unset('PREFLIGHT_PORT', 'PORT')
    expect(setting('port', undefined, ['PREFLIGHT_PORT', 'PORT'])).toBeUndefined()
    process.env.PORT = '80'
    expect(setting('port', undefined, ['PREFLIGHT_PORT', 'PORT'])).toEqual({ value: '80', name: 'PORT' })
    process.env.PREFLIGHT_PORT = '81'
    expect(setting('port', undefined, ['PREFLIGHT_PORT', 'PORT'])).toEqual({
      value: '81',
      name: 'PREFLIGHT_PORT',
    })
    expect(setting('port', '82', ['PREFLIGHT_PORT', 'PORT'])).toEqual({ value: '82', name: '--port' })
  })

  it('reads an empty variable as unset', () => {
    process.env.PREFLIGHT_PORT = ''
    process.env.PORT = '80'
    expect(setting('port', undefined, ['PREFLIGHT_PORT', 'PORT'])?.name).toBe('PORT')
  })
})

describe('settingOf', () => {
  it('reads the variables the table of commands names for the flag (its help shows them), in order', () => {
    unset('PREFLIGHT_PORT', 'PORT')
    expect(settingOf(COORDINATOR_FLAGS, 'port', {})).toBeUndefined()
    process.env.PORT = '80'
    expect(settingOf(COORDINATOR_FLAGS, 'port', {})).toEqual({ value: '80', name: 'PORT' })
    process.env.PREFLIGHT_PORT = '81'
    expect(settingOf(COORDINATOR_FLAGS, 'port', {})).toEqual({ value: '81', name: 'PREFLIGHT_PORT' })
    expect(settingOf(COORDINATOR_FLAGS, 'port', { port: '82' })).toEqual({ value: '82', name: '--port' })
  })
})

describe('a duration flag', () => {
  it.each([
    ['60s', 60_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['250ms', 250],
    ['60000', 60_000],
  ])('takes %s as %d ms', (value, ms) => {
    expect(durationFlag(value, 'lease-ms', 100, 86_400_000)).toBe(ms)
  })

  it('is undefined when not given', () => {
    expect(durationFlag(undefined, 'lease-ms', 100, 86_400_000)).toBeUndefined()
  })

  it.each([
    ['abc'],
    ['60 s'],
    ['1.5h'],
    ['-5'],
    ['5w'],
    ['50ms'], // under the bound
    ['2d'], // over it
  ])('refuses %j in one line naming the flag, its bounds and the forms it takes', (value) => {
    expect(() => durationFlag(value, 'lease-ms', 100, 86_400_000)).toThrow(UsageError)
    expect(() => durationFlag(value, 'lease-ms', 100, 86_400_000)).toThrow(
      `--lease-ms must be a duration from 100ms to 1d (milliseconds, or with a unit: 250ms, 60s, 5m, 1h), got "${value}"`,
    )
  })

  it('read from a variable, names the variable and not the flag', () => {
    process.env.PREFLIGHT_LEASE_MS = '60s'
    expect(durationSetting(setting('lease-ms', undefined, ['PREFLIGHT_LEASE_MS']), 100, 86_400_000)).toBe(
      60_000,
    )
    process.env.PREFLIGHT_LEASE_MS = 'abc'
    expect(() =>
      durationSetting(setting('lease-ms', undefined, ['PREFLIGHT_LEASE_MS']), 100, 86_400_000),
    ).toThrow(/^PREFLIGHT_LEASE_MS must be a duration from 100ms to 1d .*, got "abc"$/)
  })
})

describe('a whole-number flag', () => {
  it('names the flag, or the variable it was read from', () => {
    expect(intFlag('7', 'port', 0, 65_535)).toBe(7)
    expect(() => intFlag('http', 'port', 0, 65_535)).toThrow(
      '--port must be a whole number from 0 to 65535, got "http"',
    )
    process.env.PORT = 'http'
    expect(() => intSetting(setting('port', undefined, ['PREFLIGHT_PORT', 'PORT']), 0, 65_535)).toThrow(
      /^PORT must be a whole number/,
    )
  })
})

describe('the coordinator URL', () => {
  it('names the variable a bad URL came from', () => {
    unset('PREFLIGHT_COORDINATOR', 'PREFLIGHT_URL')
    process.env.PREFLIGHT_URL = 'ftp://x/'
    expect(() => coordinatorUrl(undefined)).toThrow(
      /^PREFLIGHT_URL must be an http\(s\) URL, got "ftp:\/\/x\/"$/,
    )
    process.env.PREFLIGHT_COORDINATOR = 'not a url'
    expect(() => coordinatorUrl(undefined)).toThrow(/^PREFLIGHT_COORDINATOR must be an http\(s\) URL/)
    expect(() => coordinatorUrl('nope')).toThrow(/^--coordinator must be an http\(s\) URL/)
    expect(coordinatorUrl('http://127.0.0.1:1').port).toBe('1')
  })
})

// Every command path with `…-ms` flags, and a command line that gets as far as reading them.
function paths(specs: Record<string, Spec>, path: string[] = []): [string, Spec][] {
  return Object.entries(specs).flatMap(([name, spec]) => [
    [[...path, name].join(' '), spec] as [string, Spec],
    ...paths(spec.commands ?? {}, [...path, name]),
  ])
}
const UUID = '0b6c3f9e-8d1a-4c47-9a57-3f0e5f1f2a11'
const REACHING: Record<string, () => { argv: string[]; env?: Record<string, string | undefined> }> = {
  check: () => {
    const dir = testDir()
    const requires = join(dir, 'requires.json')
    writeFileSync(requires, '{}')
    return { argv: ['check', '--workspace', dir, '--requires', requires] }
  },
  coordinator: () => ({
    argv: ['coordinator', '--host', '127.0.0.1', '--database-url', 'postgres://127.0.0.1:1/none'],
    env: { DATABASE_URL: undefined },
  }),
  worker: () => ({ argv: ['worker', '--coordinator', 'http://127.0.0.1:1'], env: { PREFLIGHT_TOKEN: 't' } }),
  'dispatches wait': () => ({
    argv: ['dispatches', 'wait', UUID, '--coordinator', 'http://127.0.0.1:1', '--token', 't'],
  }),
}

describe('every …-ms flag', () => {
  const flags = paths(COMMANDS).flatMap(([path, spec]) =>
    Object.keys(spec.flags ?? {})
      .filter((flag) => flag.endsWith('-ms'))
      .map((flag) => [path, flag] as const),
  )

  it('is found: the commands that have them', () => {
    expect([...new Set(flags.map(([path]) => path))]).toEqual(Object.keys(REACHING))
  })

  it.each(flags)('%s --%s is read as a duration: a bad one is exit 2 naming it', async (path, flag) => {
    const reach = REACHING[path]?.() ?? { argv: [path] }
    const r = await runRefused([...reach.argv, `--${flag}`, '1x'], reach.env)
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^preflight: --${flag} must be a duration from .*, got "1x"\n$`))
  })
})

describe('the log flags', () => {
  it('take the flag first, then PREFLIGHT_LOG_LEVEL / PREFLIGHT_LOG_FORMAT, then info and JSON off a terminal', () => {
    delete process.env.PREFLIGHT_LOG_LEVEL
    delete process.env.PREFLIGHT_LOG_FORMAT
    // vitest's workers write to pipes: no terminal
    expect(logOptions({})).toEqual({ level: 'info', format: 'json' })
    process.env.PREFLIGHT_LOG_LEVEL = 'debug'
    process.env.PREFLIGHT_LOG_FORMAT = 'pretty'
    expect(logOptions({})).toEqual({ level: 'debug', format: 'pretty' })
    expect(logOptions({ 'log-level': 'warn', 'log-format': 'json' })).toEqual({
      level: 'warn',
      format: 'json',
    })
  })

  it('read an empty variable as unset', () => {
    process.env.PREFLIGHT_LOG_LEVEL = ''
    process.env.PREFLIGHT_LOG_FORMAT = ''
    expect(logOptions({})).toEqual({ level: 'info', format: 'json' })
  })

  it('refuse a level or format they do not know, as bad input', () => {
    expect(() => logOptions({ 'log-level': 'verbose' })).toThrow(UsageError)
    process.env.PREFLIGHT_LOG_FORMAT = 'xml'
    expect(() => logOptions({})).toThrow(/^PREFLIGHT_LOG_FORMAT must be one of json, pretty, got "xml"$/)
    expect(() => logOptions({ 'log-format': 'yaml' })).toThrow(/^--log-format must be one of/)
  })
})
