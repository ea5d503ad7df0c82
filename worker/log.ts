// The worker's log: one line per event on stderr; agent and setup output on stdout, prefixed by dispatch.
export interface Log {
  info(message: string): void
  warn(message: string): void
  // a line of a workspace program's output
  output(prefix: string, line: string): void
}

export function createLog(
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Log {
  const stamp = () => new Date().toISOString()
  return {
    info: (message) => err.write(`${stamp()} ${message}\n`),
    warn: (message) => err.write(`${stamp()} warning: ${message}\n`),
    output: (prefix, line) => out.write(`[${prefix}] ${line}\n`),
  }
}
