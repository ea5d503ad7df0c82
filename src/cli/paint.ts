// Status words in colour for the operators' commands (dispatches, reports, explain): green for what went
// well, red for what failed, yellow for what could not be decided or was called off. Only the words
// are painted, after the text around them was made visible (log/controls.ts), and only when
// wantsColour says so: a terminal, NO_COLOR unset, or FORCE_COLOR.
import { type Colours, colours, wantsColour } from '../log/colour.js'
import { visible } from '../log/controls.js'

export type { Colours }

// No colour: what the formatters print unless told otherwise (JSON, a pipe, NO_COLOR).
export const PLAIN: Colours = colours(false)

const GREEN = new Set(['succeeded', 'met'])
const RED = new Set(['setup_failed', 'preflight_failed', 'failed', 'expired', 'unmet'])
const YELLOW = new Set(['cancelled', 'error'])

// The colours for what this process writes to stdout.
export const stdoutColours = (): Colours => colours(wantsColour(process.stdout))

// A status as the coordinator sent it, made visible, padded to `width` and painted.
export const statusWord = (c: Colours, status: string, width = 0): string =>
  paintStatus(c, status, visible(status).padEnd(width))

// `shown` (the word, padded or in capitals) painted for the status `word`; any other word as it is.
export function paintStatus(c: Colours, word: string, shown = word): string {
  if (GREEN.has(word)) return c.green(shown)
  if (RED.has(word)) return c.red(shown)
  if (YELLOW.has(word)) return c.yellow(shown)
  return shown
}
