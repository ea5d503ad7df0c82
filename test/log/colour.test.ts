import { describe, expect, it } from 'vitest'
import { wantsColour } from '../../src/log/colour.js'

const tty = { isTTY: true }
const pipe = { isTTY: false }

describe('colour', () => {
  it('is on for a terminal and off for a pipe or a dumb terminal', () => {
    expect(wantsColour(tty, {})).toBe(true)
    expect(wantsColour(pipe, {})).toBe(false)
    expect(wantsColour(tty, { TERM: 'dumb' })).toBe(false)
  })

  it('is off whenever NO_COLOR is set and not empty, even on a terminal or with FORCE_COLOR', () => {
    expect(wantsColour(tty, { NO_COLOR: '1' })).toBe(false)
    expect(wantsColour(tty, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(false)
    expect(wantsColour(tty, { NO_COLOR: '' })).toBe(true)
  })

  it('is on with FORCE_COLOR for a pipe, unless FORCE_COLOR is 0 or false', () => {
    expect(wantsColour(pipe, { FORCE_COLOR: '1' })).toBe(true)
    expect(wantsColour(pipe, { FORCE_COLOR: '' })).toBe(true)
    expect(wantsColour(tty, { FORCE_COLOR: '0' })).toBe(false)
    expect(wantsColour(tty, { FORCE_COLOR: 'false' })).toBe(false)
  })
})
