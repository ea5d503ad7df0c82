// A log that keeps what it is told, fields merged as a child would carry them: for tests of code that
// logs, so they assert on records (a lost lease, a slot that stopped) rather than on text.
import type { Fields } from '../../src/log/log.js'
import type { WorkerLog } from '../../worker/log.js'

export interface Recorded {
  level: 'debug' | 'info' | 'warn' | 'error' | 'output'
  msg: string
  fields: Fields
}

export function recordingLog(): { log: WorkerLog; records: Recorded[]; warnings: string[] } {
  const records: Recorded[] = []
  const warnings: string[] = []
  const make = (bound: Fields): WorkerLog => {
    const at = (level: Recorded['level']) => (msg: string, fields?: Fields) => {
      records.push({ level, msg, fields: { ...bound, ...fields } })
      if (level === 'warn') warnings.push(msg)
    }
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      openOutput: () => ({ line: (text) => at('output')(text), end: () => {} }),
      // it keeps every line
      outputDropped: () => 0,
      child: (fields) => make({ ...bound, ...fields }),
    }
  }
  return { log: make({}), records, warnings }
}
