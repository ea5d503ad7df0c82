// Runs a workspace program (setup, agent) with an exact environment, streaming its output line by line.
//
// The program runs in its own process group: stopping it (cancel, timeout) signals the whole group, and
// whatever the group still runs when the program exits is killed, so no grandchild outlives the dispatch
// or holds its output pipe open.
import { constants } from 'node:os'
import { StringDecoder } from 'node:string_decoder'
import { execa } from 'execa'

// The identity setup and the agent run as: uid and gid, no supplementary groups.
export interface AgentIdentity {
  uid: number
  gid: number
}

export interface RunOptions {
  cwd: string
  env: Record<string, string>
  timeoutMs?: number
  signal?: AbortSignal
  onLine?: (line: string) => void
  // run as this uid/gid, with no supplementary groups (--agent-uid)
  identity?: { uid: number; gid: number }
}

export interface RunResult {
  exitCode: number
  signal: string | null
  timedOut: boolean
  cancelled: boolean
  failedToStart: boolean
  tail: string
  durationMs: number
}

const KILL_GRACE_MS = 5_000
// how long output is still read after the program exited
const OUTPUT_GRACE_MS = 1_000
// what a failure reports of the output: the last lines, bounded in characters too
const TAIL_LINES = 40
const TAIL_CHARS = 8_192
// a longer run of output without a newline is passed on in pieces of this many characters
const MAX_LINE = 16_384

// Same shape for success and failure; never throws for what the program did.
export async function runProcess(argv: readonly string[], opts: RunOptions): Promise<RunResult> {
  const started = Date.now()
  const [file, ...args] = argv
  if (!file) throw new Error('runProcess needs at least the program to run')
  const tail = new Tail(TAIL_LINES)
  const subprocess = execa(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    // Only the given environment: the worker's own variables must not leak into workspace programs.
    extendEnv: false,
    stdin: 'ignore',
    all: true,
    buffer: false,
    reject: false,
    detached: true,
    ...(opts.identity ? { uid: opts.identity.uid, gid: opts.identity.gid } : {}),
  })
  const stop = stopper(subprocess.pid)
  let drain: NodeJS.Timeout | undefined
  subprocess.once('exit', () => {
    stop.reap()
    // What still holds the output open now escaped the group (setsid): it is not the program's
    // output, and waiting for it would outlast every time bound. Read what is buffered, then stop.
    drain = setTimeout(() => {
      subprocess.stdout?.destroy()
      subprocess.stderr?.destroy()
    }, OUTPUT_GRACE_MS)
  })
  const timer = opts.timeoutMs ? setTimeout(() => stop.end('timeout'), opts.timeoutMs) : undefined
  const onAbort = () => stop.end('cancel')
  if (opts.signal?.aborted) onAbort()
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  const lines = new Lines((line) => {
    tail.push(line)
    try {
      opts.onLine?.(line)
    } catch {
      // a failed log write must not stop the draining: the program would die of a full pipe
    }
  })
  try {
    // chunks, not execa's lines: a line is only as long as MAX_LINE, whatever the program prints
    for await (const chunk of subprocess.iterable({ from: 'all', binary: true })) lines.push(chunk)
    lines.end()
  } catch {
    // the iterable rejects when the subprocess fails; the result below says how
  } finally {
    clearTimeout(timer)
    clearTimeout(drain)
    opts.signal?.removeEventListener('abort', onAbort)
  }
  const result = await subprocess
  stop.done()
  const failedToStart = result.exitCode === undefined && !result.signal
  if (failedToStart) tail.push(result.originalMessage ?? result.shortMessage ?? 'failed to start')
  return {
    exitCode: exitCodeOf(result.exitCode, result.signal, failedToStart),
    signal: result.signal ?? null,
    timedOut: stop.why === 'timeout',
    cancelled: stop.why === 'cancel',
    failedToStart,
    tail: tail.text(),
    durationMs: Date.now() - started,
  }
}

// SIGTERM to the group, SIGKILL after a grace period; SIGKILL to what is left when the leader exits.
function stopper(pid: number | undefined) {
  let force: NodeJS.Timeout | undefined
  const signalGroup = (signal: NodeJS.Signals) => {
    if (pid === undefined) return
    try {
      process.kill(-pid, signal)
    } catch {
      // the group is gone already
    }
  }
  const state = {
    why: undefined as 'timeout' | 'cancel' | undefined,
    exited: false,
    // a program that already exited was neither timed out nor cancelled, whatever its output still does
    end(why: 'timeout' | 'cancel') {
      if (state.why || state.exited) return
      state.why = why
      signalGroup('SIGTERM')
      force = setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS)
      force.unref()
    },
    reap() {
      state.exited = true
      signalGroup('SIGKILL')
    },
    done: () => clearTimeout(force),
  }
  return state
}

// Shell conventions: 127 when the program could not start, 128 + n when a signal ended it.
function exitCodeOf(code: number | undefined, signal: string | undefined, failedToStart: boolean): number {
  if (code !== undefined) return code
  if (failedToStart) return 127
  const numbers: Record<string, number> = constants.signals
  return 128 + (signal ? (numbers[signal] ?? 0) : 0)
}

// The last lines of output, bounded in characters as well.
class Tail {
  private lines: string[] = []
  constructor(private readonly max: number) {}
  push(line: string) {
    this.lines.push(line.length > TAIL_CHARS ? `…${line.slice(-TAIL_CHARS)}` : line)
    if (this.lines.length > this.max) this.lines.shift()
  }
  text(): string {
    const text = this.lines.join('\n')
    return text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text
  }
}

// Splits output into lines (\n or \r\n), UTF-8 decoded across chunks, each at most MAX_LINE long
// (cut before a surrogate pair, never inside one).
class Lines {
  private pending = ''
  private readonly decoder = new StringDecoder('utf8')
  constructor(private readonly emit: (line: string) => void) {}
  push(chunk: Uint8Array) {
    const parts = (this.pending + this.decoder.write(Buffer.from(chunk))).split('\n')
    this.pending = parts.pop() ?? ''
    for (const part of parts) this.line(part)
    // a trailing \r may be the first half of a \r\n: it does not count towards the bound
    while (this.pending.length - (this.pending.endsWith('\r') ? 1 : 0) > MAX_LINE) {
      this.pending = this.pending.slice(this.cut(this.pending))
    }
  }
  end() {
    const rest = this.pending + this.decoder.end()
    this.pending = ''
    if (rest) this.line(rest)
  }
  private line(text: string) {
    let rest = text.endsWith('\r') ? text.slice(0, -1) : text
    while (rest.length > MAX_LINE) rest = rest.slice(this.cut(rest))
    this.emit(rest)
  }
  // Emits the first piece of a too-long text and says where the rest begins.
  private cut(text: string): number {
    const high = text.charCodeAt(MAX_LINE - 1)
    const at = high >= 0xd800 && high <= 0xdbff ? MAX_LINE - 1 : MAX_LINE
    this.emit(text.slice(0, at))
    return at
  }
}
