// The one duration syntax of the command line: a whole number with a unit, or bare milliseconds.
import { describe, expect, it } from 'vitest'
import { formatDuration, parseDuration } from '../../src/cli/duration.js'

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['60s', 60_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['0s', 0],
    ['60000', 60_000],
    ['0', 0],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })

  it.each([
    '',
    'abc',
    '60 s',
    ' 60s',
    '60S',
    '1.5h',
    '-5',
    '-5s',
    '1e3',
    '0x10',
    '5w',
    '1h30m',
    's',
    '99999999999999999',
  ])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined()
  })

  it('refuses a bare number where a unit is required, and takes one with a unit', () => {
    expect(parseDuration('90', { bare: false })).toBeUndefined()
    expect(parseDuration('90d', { bare: false })).toBe(90 * 86_400_000)
  })

  it('refuses a duration past what a number holds exactly', () => {
    expect(parseDuration('9999999999999999d')).toBeUndefined()
  })
})

describe('formatDuration', () => {
  it.each([
    [0, '0'],
    [100, '100ms'],
    [1_500, '1500ms'],
    [10_000, '10s'],
    [600_000, '10m'],
    [3_600_000, '1h'],
    [86_400_000, '1d'],
    [2_147_483_647, '2147483647ms'],
  ])('writes %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text)
    expect(parseDuration(text)).toBe(ms)
  })
})
