// The worker's log: its own records on stderr; each line of setup's and the agent's output as a record
// on stdout, with the fields of the log it went through (dispatchId, attempt, step).
import { createLog, type Fields, type Log, type LogOptions, type Sink } from '../src/log/log.js'

export interface WorkerLog extends Log {
  child(fields: Fields): WorkerLog
  // a line of a workspace program's output
  output(line: string): void
}

// Output waiting for a slow reader of the worker's stdout is bounded: past this many bytes, lines are
// dropped (and counted) instead of held, so an agent that prints without end cannot fill the worker's
// memory, and the agent is never slowed by the log. The worker's own records go to stderr: a stalled
// reader of the output holds none of them back.
export const MAX_PENDING_OUTPUT = 8 * 1024 * 1024

export interface WorkerLogOptions extends Omit<LogOptions, 'name' | 'stream'> {
  out?: Sink & { writableLength: number }
  err?: Sink
}

export function createWorkerLog(opts: WorkerLogOptions = {}): WorkerLog {
  const { out = process.stdout, err = process.stderr, ...common } = opts
  const records = createLog({ ...common, name: 'worker', stream: err })
  const lines = createLog({ ...common, name: 'worker', stream: out }).child({ output: true })
  return workerLog(records, lines, out, { dropped: 0 })
}

function workerLog(
  records: Log,
  lines: Log,
  out: { writableLength: number },
  pending: { dropped: number },
): WorkerLog {
  return {
    debug: records.debug,
    info: records.info,
    warn: records.warn,
    error: records.error,
    child: (fields) => workerLog(records.child(fields), lines.child(fields), out, pending),
    output(line) {
      // before the record is made: a dropped line costs no serialising
      if (out.writableLength > MAX_PENDING_OUTPUT) {
        pending.dropped++
        return
      }
      if (pending.dropped > 0) {
        const dropped = pending.dropped
        pending.dropped = 0
        lines.warn(`… ${dropped} line(s) of output dropped: the log's reader was too slow`, { dropped })
      }
      lines.info(line)
    },
  }
}

// A dispatch's log: every record carries the step the dispatch is in at the time it is written, also
// for those who hold the log from an earlier step (the lease keeper).
export function stepLog(base: WorkerLog, first: string): { log: WorkerLog; enter(step: string): void } {
  let current = base.child({ step: first })
  const log: WorkerLog = {
    debug: (msg, fields) => current.debug(msg, fields),
    info: (msg, fields) => current.info(msg, fields),
    warn: (msg, fields) => current.warn(msg, fields),
    error: (msg, fields) => current.error(msg, fields),
    child: (fields) => current.child(fields),
    output: (line) => current.output(line),
  }
  return {
    log,
    enter(step) {
      current = base.child({ step })
    },
  }
}
