// The worker's log: one line per event on stderr; agent and setup output on stdout, prefixed by dispatch.
export interface Log {
  info(message: string): void
  warn(message: string): void
  // a line of a workspace program's output
  output(prefix: string, line: string): void
}

// Output waiting for a slow reader of the worker's stdout is bounded: past this many bytes, lines are
// dropped (and counted) instead of held, so an agent that prints without end cannot fill the worker's
// memory, and the agent is never slowed by the log.
export const MAX_PENDING_OUTPUT = 8 * 1024 * 1024

export function createLog(
  out: NodeJS.WritableStream & { writableLength: number } = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Log {
  const stamp = () => new Date().toISOString()
  let dropped = 0
  return {
    info: (message) => err.write(`${stamp()} ${message}\n`),
    warn: (message) => err.write(`${stamp()} warning: ${message}\n`),
    output(prefix, line) {
      if (out.writableLength > MAX_PENDING_OUTPUT) {
        dropped++
        return
      }
      if (dropped > 0) {
        out.write(`[${prefix}] … ${dropped} line(s) of output dropped: the log's reader was too slow\n`)
        dropped = 0
      }
      out.write(`[${prefix}] ${line}\n`)
    },
  }
}
