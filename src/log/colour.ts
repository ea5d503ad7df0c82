// Whether text for a stream is coloured, and the colours: picocolors, decided per stream rather than by
// picocolors' own look at stdout alone.
import picocolors from 'picocolors'

export type Colours = ReturnType<typeof picocolors.createColors>

// NO_COLOR (set and not empty) never; FORCE_COLOR always, unless it is "0" or "false"; otherwise only
// on a terminal that is not "dumb".
export function wantsColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false
  const force = env.FORCE_COLOR
  if (force !== undefined) return force !== '0' && force !== 'false'
  return stream.isTTY === true && env.TERM !== 'dumb'
}

export function colours(enabled: boolean): Colours {
  return picocolors.createColors(enabled)
}
