// Setup and the agent run under strace when the worker observes (--observe; docs/attribution.md). The
// tracer runs as the worker, and `setpriv` switches the traced program to the slot's uid: the agent can
// neither stop its tracer nor write its trace, which goes through a FIFO in a directory only the worker
// may enter, read and parsed as it comes: nothing of it is kept on disk, and what passes the bound is
// read and dropped.
import { spawnSync } from 'node:child_process'
import { constants, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { executableIn } from '../run/executable.js'
import type { AgentIdentity } from '../run/process.js'
import { type Needs, TRACED_CALLS, TraceReader } from './parse.js'

export interface Tracer {
  strace: string
  setpriv: string
  env: string
  mkfifo: string
}

// Debian's packages, from the system's own directories only: never a program on the agent's PATH.
const SYSTEM_DIRS = ['/usr/bin', '/bin']

const program = (name: string) =>
  SYSTEM_DIRS.map((dir) => executableIn(dir, name)).find((path) => path !== undefined)

// The tracer this machine has and may use, or why there is none: installed, and allowed to trace (a
// container's seccomp profile or a missing capability refuses ptrace; strace then runs nothing at all).
export function findTracer(): Tracer | string {
  const strace = program('strace')
  const setpriv = program('setpriv')
  if (!strace) return 'strace is not installed (Debian: apt-get install strace)'
  const env = program('env')
  const mkfifo = program('mkfifo')
  if (!setpriv || !env || !mkfifo)
    return 'setpriv, env or mkfifo is not installed (Debian: util-linux, coreutils)'
  const probe = spawnSync(strace, [...OPTIONS, '-o', '/dev/null', '--', '/bin/true'], {
    env: {},
    encoding: 'utf8',
    timeout: 10_000,
  })
  if (probe.status !== 0)
    return `strace cannot trace here: ${probe.stderr.trim().split('\n')[0] || probe.error?.message || `exit ${probe.status}`}`
  return { strace, setpriv, env, mkfifo }
}

// -DD: the tracer is a grandchild in a process group of its own, and the traced program is the process
// the worker started — its exit, exit code and process group are the program's, as without a tracer;
// the tracer ends with the last process it traces. -y: paths of descriptors, the cwd's too.
const OPTIONS = ['-DD', '-f', '--seccomp-bpf', '-qq', '-y', '-s', '4096', '-e', 'signal=none']

// glibc's "unsecure" variables (what its loader ignores for a setuid program) and every LD_*: the tracer
// and setpriv run as the worker, so a definition's LD_PRELOAD or a relative LD_LIBRARY_PATH would load
// the workspace's code as root. They are given back to the program by env(1), after the switch.
const UNSECURE = new Set([
  'GCONV_PATH',
  'GETCONF_DIR',
  'GLIBC_TUNABLES',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'LOCPATH',
  'MALLOC_TRACE',
  'NIS_PATH',
  'NLSPATH',
  'RESOLV_HOST_CONF',
  'RES_OPTIONS',
  'TMPDIR',
  'TZDIR',
  // gettext's: a relative value walks out of /usr/share/locale
  'LANGUAGE',
])
const isUnsecure = (name: string) => name.startsWith('LD_') || UNSECURE.has(name)

// A run's trace: the command line and environment that make it, and what it saw once the run is over.
export interface Trace {
  argv: string[]
  env: Record<string, string>
  // what it saw, once the tracer has been quiet a moment (it writes each call before the program goes on);
  // the FIFO is closed then, and a tracer that still traces a process that escaped the run is killed:
  // that process's traced calls fail (ENOSYS) until the sweep ends it
  needs(): Promise<Needs>
}

// Ends the tracers that write to `fifo` (theirs, this process's uid): named by it on their command line.
function stopTracersOf(fifo: string): void {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (statSync(`/proc/${pid}`).uid !== process.getuid?.()) continue
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(fifo))
        process.kill(Number(pid), 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }
}

// Past this much trace the rest is read and dropped (a test suite that opens millions of files): the
// record says cut.
const MAX_TRACE_BYTES = 256 * 1024 * 1024
const QUIET_MS = 100
const MAX_WAIT_MS = 2_000

export interface TraceOptions {
  workspace: string
  // the PATH the program was given
  pathEntries: readonly string[]
  // the workspace files read too (`preflight learn`)
  reads?: boolean
  // run as this uid (the tracer stays the worker's)
  identity?: AgentIdentity
  // where the FIFO's directory is made: the worker's own (its workdir), never one the agent shares
  under?: string
}

// Throws when the FIFO cannot be made: the caller runs the program untraced then.
export function traced(
  tracer: Tracer,
  argv: readonly string[],
  env: Record<string, string>,
  opts: TraceOptions,
): Trace {
  const held = opts.identity ? Object.entries(env).filter(([name]) => isUnsecure(name)) : []
  // env(1) would read a program whose name holds `=` as one more variable
  if (held.length > 0 && argv[0]?.includes('=')) throw new Error('the program’s name holds "=": not traced')
  // mkdtemp makes it 0700: the worker's own
  const dir = mkdtempSync(join(opts.under ?? tmpdir(), 'preflight-trace-'))
  const fifo = join(dir, 'trace')
  let fd: number
  try {
    const made = spawnSync(tracer.mkfifo, ['-m', '600', fifo], { env: {}, encoding: 'utf8' })
    if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr.trim() || made.error?.message}`)
    // read and write: opening never waits for the tracer, and the FIFO never reads as ended before it came
    fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK)
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  const wrappers = [
    ...(opts.identity
      ? [
          tracer.setpriv,
          `--reuid=${opts.identity.uid}`,
          `--regid=${opts.identity.gid}`,
          '--clear-groups',
          '--',
        ]
      : []),
    ...(held.length > 0 ? [tracer.env, ...held.map(([name, value]) => `${name}=${value}`)] : []),
  ]
  const reader = new TraceReader(
    opts.workspace,
    opts.pathEntries,
    (opts.identity ? 1 : 0) + (held.length > 0 ? 1 : 0),
    opts.reads,
  )
  const socket = new Socket({ fd, readable: true, writable: false })
  let bytes = 0
  let last = Date.now()
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    last = Date.now()
  })
  // a read error (none expected) ends the record as it is
  socket.on('error', () => {})
  const lines = createInterface({ input: socket, crlfDelay: Number.POSITIVE_INFINITY })
  lines.on('line', (line) => {
    if (bytes <= MAX_TRACE_BYTES) reader.line(line)
  })
  const calls = TRACED_CALLS.map((call) => `?${call}`).join(',')
  return {
    argv: [tracer.strace, ...OPTIONS, '-e', `trace=${calls}`, '-o', fifo, '--', ...wrappers, ...argv],
    env: Object.fromEntries(Object.entries(env).filter(([name]) => !held.some(([h]) => h === name))),
    async needs() {
      const started = Date.now()
      while (Date.now() - last < QUIET_MS && Date.now() - started < MAX_WAIT_MS)
        await new Promise((resolve) => setTimeout(resolve, QUIET_MS / 2))
      lines.close()
      socket.destroy()
      // a tracer still tracing a process that escaped the run: strace goes on after a failed write
      stopTracersOf(fifo)
      rmSync(dir, { recursive: true, force: true })
      const needs = reader.needs()
      return bytes > MAX_TRACE_BYTES ? { ...needs, cut: true } : needs
    },
  }
}
