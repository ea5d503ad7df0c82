import { describe, expect, it } from 'vitest'
import { jsonWithoutControls, visible } from '../../src/log/controls.js'
import { createLog } from '../../src/log/log.js'

describe('visible', () => {
  it('writes C0 but tab, DEL, C1 and the bidi overrides and isolates as escapes', () => {
    expect(visible('\u0000\u0007\b\t\n\r\u001b\u007f\u0080\u009b\u009f')).toBe(
      '\\x00\\x07\\x08\t\\n\\r\\x1b\\x7f\\x80\\x9b\\x9f',
    )
    expect(visible('\u202a\u202e\u2066\u2069')).toBe('\\u202a\\u202e\\u2066\\u2069')
  })

  it('leaves printable text alone, non-ASCII and bidi marks included', () => {
    const text = 'naïve — 日本語 \u00a0 שלום\u200f C:\\x1b'
    expect(visible(text)).toBe(text)
  })
})

describe('the JSON form', () => {
  it('writes DEL, C1 and the bidi controls as \\u escapes, so a JSON line read in a terminal drives nothing', () => {
    const lines: string[] = []
    const log = createLog({ name: 'worker', stream: { write: (l) => lines.push(l) } })
    const hostile = 'a\u001b[2K\u009b2K\u007f\u202eb'
    log.child({ output: true }).info(hostile, { why: hostile })
    expect(lines).toHaveLength(1)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding exactly those characters
    expect(lines[0]?.replace(/\n$/, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ msg: hostile, why: hostile })
  })

  it('changes nothing a parser reads', () => {
    const line = JSON.stringify({ k: 'x\u009by\u2066z\u007f', n: 1 })
    expect(JSON.parse(jsonWithoutControls(line))).toEqual(JSON.parse(line))
    expect(jsonWithoutControls(line)).toBe('{"k":"x\\u009by\\u2066z\\u007f","n":1}')
  })
})
