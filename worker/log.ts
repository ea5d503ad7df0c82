// The worker's log: its own records on stderr; each line of setup's and the agent's output as a record
// on stdout, with the fields of the log it went through (dispatchId, attempt, step).
import { createLog, type Fields, type Log, type LogOptions, type Sink } from '../src/log/log.js'

export interface WorkerLog extends Log {
  child(fields: Fields): WorkerLog
  // one run of a workspace program (setup, the agent): its output, line by line, with this log's fields
  openOutput(): Output
  // lines of output dropped through this log and its children so far: a dispatch's log counts its own
  outputDropped(): number
}

// A program's output into the log. Lines a slow reader has left no room for are dropped and counted: a
// `warn` record with `dropped` says how many before the next line written, and end() says how many
// more when the output ends. So every count is written with the fields of the output it was dropped
// from (its dispatch, its step), never under another dispatch's.
export interface Output {
  line(text: string): void
  end(): void
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

// Lines dropped through one log; each drop is counted by the log's parents too.
interface Count {
  dropped: number
  parent?: Count
}

function workerLog(records: Log, lines: Log, out: { writableLength: number }, count: Count): WorkerLog {
  return {
    debug: records.debug,
    info: records.info,
    warn: records.warn,
    error: records.error,
    child: (fields) =>
      workerLog(records.child(fields), lines.child(fields), out, { dropped: 0, parent: count }),
    openOutput: () => output(lines, out, count),
    outputDropped: () => count.dropped,
  }
}

function output(lines: Log, out: { writableLength: number }, count: Count): Output {
  // dropped since the last line written
  let gap = 0
  const tell = () => {
    if (gap === 0) return
    lines.warn(`… ${gap} line(s) of output dropped: the log's reader was too slow`, { dropped: gap })
    gap = 0
  }
  return {
    line(text) {
      // before the record is made: a dropped line costs no serialising
      if (out.writableLength > MAX_PENDING_OUTPUT) {
        gap++
        for (let c: Count | undefined = count; c; c = c.parent) c.dropped++
        return
      }
      tell()
      lines.info(text)
    },
    end: tell,
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
    // the step the program runs in: its output is written with it to the end, its count included
    openOutput: () => current.openOutput(),
    outputDropped: () => base.outputDropped(),
  }
  return {
    log,
    enter(step) {
      current = base.child({ step })
    },
  }
}
