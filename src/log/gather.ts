// The coordinator's log lines gathered into fewer writes (log.ts), and written out before the process
// ends or writes past the log. Apart from log.ts so the CLI's entry can flush without loading pino.

// Lines written together: once 16 KiB are waiting, 50 ms after the first of them, at once for a warning
// or an error (with the lines before it), and when the process exits. A line a request was a write a
// request, each a system call that wakes the log's reader: 3–4 % of the coordinator's CPU in the
// benchmark (docs/logging.md). A process killed outright (SIGKILL, the OOM killer) loses the last 50 ms.
// Not pino's sonic-boom (minLength, periodicFlush): it writes to fd 2 itself, past process.stderr and
// the EPIPE handling the CLI puts on it (cli/closed-output.ts), and past the redaction's one path.
const GATHER_MS = 50
const GATHER_BYTES = 16_384
const gatherers = new Set<() => void>()

// Writes what every gathered log holds: at exit, and before a line written to stderr past the log.
export function flushLogs(): void {
  for (const flush of gatherers) flush()
}
process.once('exit', flushLogs)

export function gathered(sink: { write(line: string): unknown }) {
  let waiting = ''
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    if (waiting === '') return
    const lines = waiting
    waiting = ''
    sink.write(lines)
  }
  gatherers.add(flush)
  return {
    flush,
    write(line: string) {
      waiting += line
      if (waiting.length >= GATHER_BYTES) flush()
      else timer ??= setTimeout(flush, GATHER_MS).unref()
    },
  }
}
