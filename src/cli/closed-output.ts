// A stdout or stderr whose reader went away (`preflight --help | head -1`, a log shipper that stopped)
// ends the process quietly. Node ignores SIGPIPE, so such a write fails with EPIPE instead, and the
// 'error' event it makes, with no listener, would end the process with a stack trace.
import { flushLogs } from '../log/gather.js'

// 128 + SIGPIPE (13): the status a shell shows for git or cat cut off by `| head`, which SIGPIPE ends.
// A script with `set -o pipefail` then treats preflight as it treats them; 0 would say that all the
// output was written, and 1 is a fault of the command.
export const CLOSED_OUTPUT_EXIT = 141

export interface OutputDeps {
  // the process's stdout and stderr
  streams: { out: NodeJS.EventEmitter; err: NodeJS.EventEmitter }
  // whether the command is still running (not yet returned to main)
  running: () => boolean
  // asks a running command to stop as SIGTERM does; false when it has no such stop
  stop: () => boolean
  exit: (code: number) => void
  // one line on stderr
  say: (line: string) => void
}

export interface WatchedOutput {
  // the exit code a broken output calls for (141 for EPIPE, 1 for another error), once one broke
  code(): number | undefined
}

// A write error on either stream. A command that stops on SIGTERM (the coordinator, the worker,
// `dispatches watch`) is stopped that way, so the worker hands its dispatches back and kills no agent
// mid-run; main() answers the code once it returned. Any other command, or one that already returned,
// ends at once, as SIGPIPE or Ctrl-C would end it. Another error than EPIPE (EIO, ENOSPC) is a fault:
// exit 1, said on stderr when stdout is the one that failed.
export function watchOutput(deps: OutputDeps): WatchedOutput {
  let code: number | undefined
  const broke = (stream: 'stdout' | 'stderr') => (err: NodeJS.ErrnoException) => {
    if (code !== undefined) return
    code = err.code === 'EPIPE' ? CLOSED_OUTPUT_EXIT : 1
    if (code === 1 && stream === 'stdout') deps.say(`cannot write to stdout: ${err.code ?? err.message}`)
    if (!deps.running() || !deps.stop()) deps.exit(code)
  }
  deps.streams.out.on('error', broke('stdout'))
  deps.streams.err.on('error', broke('stderr'))
  return { code: () => code }
}

// The deps of the process itself: its own streams, SIGTERM's listeners, process.exit.
export function processOutputDeps(running: () => boolean): OutputDeps {
  return {
    streams: { out: process.stdout, err: process.stderr },
    running,
    // the listeners are the command's own: main() runs one command in the process it owns
    stop: () => process.listenerCount('SIGTERM') > 0 && process.emit('SIGTERM', 'SIGTERM'),
    exit: (code) => process.exit(code),
    say: (line) => {
      flushLogs()
      process.stderr.write(`preflight: ${line}\n`)
    },
  }
}
