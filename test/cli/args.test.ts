import { afterEach, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/cli/errors.js'
import { logOptions } from '../../src/cli/log-options.js'

const saved = { level: process.env.PREFLIGHT_LOG_LEVEL, format: process.env.PREFLIGHT_LOG_FORMAT }
afterEach(() => {
  for (const [name, value] of [
    ['PREFLIGHT_LOG_LEVEL', saved.level],
    ['PREFLIGHT_LOG_FORMAT', saved.format],
  ] as const) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
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
    expect(() => logOptions({})).toThrow(/--log-format must be one of json, pretty, got "xml"/)
  })
})
