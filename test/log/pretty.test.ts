import { describe, expect, it } from 'vitest'
import { colours } from '../../src/log/colour.js'
import { createLog } from '../../src/log/log.js'
import { prettyRecord } from '../../src/log/pretty.js'

// What an agent may print to take over the terminal of whoever watches the worker: set the title
// (OSC 0 … BEL), go back to the line's start (CR) and erase it (CSI 2K, 7-bit and the 8-bit 0x9b),
// backspace, DEL, NUL, and a right-to-left override that shows the line's end first.
const HOSTILE = 'ok\u001b]0;pwned\u0007\r\u001b[2Kdone\u009b2K\b\u007f\u0000 \u202egnp.exe'
const SHOWN = 'ok\\x1b]0;pwned\\x07\\r\\x1b[2Kdone\\x9b2K\\x08\\x7f\\x00 \\u202egnp.exe'
// Anything a terminal acts on, but tab and the one newline that ends a line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding exactly those characters
const RAW_CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

function prettyLines(colour: boolean) {
  const lines: string[] = []
  const log = createLog({ name: 'worker', format: 'pretty', colour, stream: { write: (l) => lines.push(l) } })
  return { log, text: () => lines.join('') }
}

const bodyOf = (text: string) => text.replace(/\n$/, '')

describe('the pretty form', () => {
  it("shows the control characters of a program's output line as visible escapes", () => {
    const { log, text } = prettyLines(false)
    log.child({ dispatchId: '0123456789abcdef', step: 'agent', output: true }).info(HOSTILE)
    expect(text()).toBe(`[01234567 agent] ${SHOWN}\n`)
    expect(bodyOf(text())).not.toMatch(RAW_CONTROL)
  })

  it('shows them as escapes in a record’s message, fields, nested fields and error', () => {
    const { log, text } = prettyLines(false)
    const err = new Error(`clone failed: ${HOSTILE}`)
    log.warn(`setup said ${HOSTILE}`, { why: HOSTILE, seen: { line: HOSTILE }, [`k${HOSTILE}`]: 1, err })
    const [head, ...stack] = text().split('\n').slice(0, -1)
    expect(head).toContain(`setup said ${SHOWN}`)
    expect(stack[0]).toBe(`  Error: clone failed: ${SHOWN}`)
    for (const line of [head, ...stack]) expect(line).not.toMatch(RAW_CONTROL)
  })

  it('keeps a tab, and with colour writes no escape but its own colours', () => {
    const { log, text } = prettyLines(true)
    log.child({ dispatchId: 'd1', step: 'agent', output: true }).info(`a\tb ${HOSTILE}`)
    log.error(HOSTILE, { why: HOSTILE })
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the colours' own SGR sequences
    const withoutColours = bodyOf(text()).replace(/\u001b\[\d+m/g, '')
    expect(withoutColours).toContain(`a\tb ${SHOWN}`)
    expect(withoutColours.split('\n').filter((l) => RAW_CONTROL.test(l))).toEqual([])
  })

  it('keeps the line breaks of an error stack, indented', () => {
    const text = prettyRecord(
      {
        level: 'error',
        msg: 'boom',
        err: { type: 'Error', message: 'x', stack: 'Error: x\n    at f (a.js:1:1)' },
      },
      colours(false),
    )
    expect(text).toBe(' ERROR boom\n  Error: x\n      at f (a.js:1:1)\n')
  })
})
