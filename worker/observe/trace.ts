// Setup and the agent run under a tracer when the worker observes (--observe; docs/attribution.md):
// preflight-trace (native/trace.c, built into dist/ by `npm run build`), which hands the traced calls to a
// supervisor through a seccomp filter and never stops the program otherwise, or else strace. Either runs
// as the worker and switches the traced program to the slot's uid (preflight-trace itself, strace through
// `setpriv`): the agent can neither stop its tracer nor write its trace, which goes through a FIFO in a
// directory only the worker may enter, read and parsed as it comes (both write strace's line format):
// nothing of it is kept on disk, and what passes the bound is read and dropped.
import { spawnSync } from 'node:child_process'
import {
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { executableIn } from '../run/executable.js'
import type { AgentIdentity } from '../run/process.js'
import { type Needs, TRACED_CALLS, TraceReader } from './parse.js'

export type Tracer =
  | { kind: 'seccomp'; program: string; env: string; mkfifo: string }
  | { kind: 'strace'; program: string; setpriv: string; env: string; mkfifo: string }
export type TracerKind = Tracer['kind']

// Every program a tracer runs as the worker: none may be one the agent can write.
export const tracerPrograms = (tracer: Tracer): string[] =>
  tracer.kind === 'strace'
    ? [tracer.program, tracer.setpriv, tracer.env, tracer.mkfifo]
    : [tracer.program, tracer.env, tracer.mkfifo]

// Debian's packages, from the system's own directories only: never a program on the agent's PATH.
const SYSTEM_DIRS = ['/usr/bin', '/bin']

const program = (name: string) =>
  SYSTEM_DIRS.map((dir) => executableIn(dir, name)).find((path) => path !== undefined)

// The package's own dist/preflight-trace: in the first directory upward from this file (worker/observe,
// dist/worker/observe or the CLI's bundle in dist/src/cli) whose package.json is preflight's, and nowhere
// else — never a program on a PATH, nor one in a directory above the package.
function helper(): string | undefined {
  for (let dir = new URL('.', import.meta.url); dir.pathname !== '/'; dir = new URL('..', dir)) {
    try {
      if (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')).name !== 'preflight') continue
    } catch {
      continue
    }
    return executableIn(fileURLToPath(new URL('dist/', dir)), 'preflight-trace')
  }
  return undefined
}

// Why `argv` cannot trace /bin/true here, or undefined when it can: it runs, and its trace has the
// exec (preflight-trace runs anything where it may not read a program's memory — a Yama ptrace_scope, a
// security module — and records nothing).
export function refusal(argv: readonly string[]): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'preflight-probe-'))
  try {
    const out = join(dir, 'trace')
    const probe = spawnSync(argv[0] as string, [...argv.slice(1), '-o', out, '--', '/bin/true'], {
      env: {},
      encoding: 'utf8',
      timeout: 10_000,
    })
    if (probe.status !== 0)
      return probe.stderr.trim().split('\n')[0] || probe.error?.message || `exit ${probe.status}`
    // preflight-trace's supervisor writes on after the program has ended, until its last line
    const read = () => (existsSync(out) ? readFileSync(out, 'utf8') : '')
    for (
      let waited = 0;
      waited < 2_000 && argv[0]?.endsWith('preflight-trace') && !read().includes(END);
      waited += 10
    )
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
    return /^\d+ +execve\("\/(usr\/)?bin\/true"/m.test(read())
      ? undefined
      : 'it ran a program but saw nothing of it (it may not read the program’s memory here)'
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// The tracer this machine has and may use, the first of `kinds` that works, or why there is none:
// installed, and allowed to trace (a seccomp profile may refuse filters with a listener, or ptrace; a
// kernel before 5.5 has no user notification).
export function findTracer(kinds: readonly TracerKind[] = ['seccomp', 'strace']): Tracer | string {
  const env = program('env')
  const mkfifo = program('mkfifo')
  if (!env || !mkfifo) return 'env or mkfifo is not installed (Debian: coreutils)'
  const why: string[] = []
  for (const kind of kinds) {
    if (kind === 'seccomp') {
      const found = helper()
      const refused = found ? refusal([found]) : 'not built (npm run build found no C compiler)'
      if (found && !refused) return { kind, program: found, env, mkfifo }
      why.push(`preflight-trace: ${refused}`)
      continue
    }
    const strace = program('strace')
    const setpriv = program('setpriv')
    const refused = !strace
      ? 'not installed (Debian: apt-get install strace)'
      : !setpriv
        ? 'setpriv is not installed (Debian: util-linux)'
        : refusal([strace, ...OPTIONS])
    if (strace && setpriv && !refused) return { kind, program: strace, setpriv, env, mkfifo }
    why.push(`strace: ${refused}`)
  }
  return `no tracer: ${why.join('; ')}`
}

// -DD: the tracer is a grandchild in a process group of its own, and the traced program is the process
// the worker started — its exit, exit code and process group are the program's, as without a tracer;
// the tracer ends with the last process it traces. -y: paths of descriptors, the cwd's too.
const OPTIONS = ['-DD', '-f', '--seccomp-bpf', '-qq', '-y', '-s', '4096', '-e', 'signal=none']

// glibc's "unsecure" variables (what its loader ignores for a setuid program) and every LD_*: the tracer
// (and setpriv) run as the worker, so a definition's LD_PRELOAD or a relative LD_LIBRARY_PATH would load
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
  // what it saw, once the trace is whole: preflight-trace says so when every process it traced has
  // ended, strace's is taken as whole once quiet a moment (it writes each call before the program goes
  // on); at most MAX_WAIT_MS. The FIFO is closed then, and a tracer that still traces a process that
  // escaped the run is killed: that process's traced calls fail (ENOSYS) until the sweep ends it
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

// preflight-trace's last line once every process it traced has ended and been reaped (native/trace.c)
const SAID = 'preflight-trace: '
const END = `${SAID}every traced process has ended`
// and before it, how many calls it could not read, if any
const UNREADABLE = /^preflight-trace: (\d+) calls unreadable$/

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
  const { identity } = opts
  // strace cannot switch the uid itself: setpriv does, as the first program it traces
  const setpriv = identity && tracer.kind === 'strace' ? tracer.setpriv : undefined
  const wrappers = [
    ...(identity && setpriv
      ? [setpriv, `--reuid=${identity.uid}`, `--regid=${identity.gid}`, '--clear-groups', '--']
      : []),
    ...(held.length > 0 ? [tracer.env, ...held.map(([name, value]) => `${name}=${value}`)] : []),
  ]
  const reader = new TraceReader(
    opts.workspace,
    opts.pathEntries,
    (setpriv ? 1 : 0) + (held.length > 0 ? 1 : 0),
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
  let end = () => {}
  const ended = new Promise<void>((resolve) => {
    end = resolve
  })
  let unreadable = 0
  lines.on('line', (line) => {
    // the tracer's own lines, which no call's line (`PID call(…)`) can be
    if (line.startsWith(SAID)) {
      if (line === END) end()
      unreadable = Number(UNREADABLE.exec(line)?.[1] ?? unreadable)
    } else if (bytes <= MAX_TRACE_BYTES) reader.line(line)
  })
  const calls = TRACED_CALLS.map((call) => `?${call}`).join(',')
  const tracing =
    tracer.kind === 'strace'
      ? [tracer.program, ...OPTIONS, '-e', `trace=${calls}`, '-o', fifo]
      : [
          tracer.program,
          '-o',
          fifo,
          ...(opts.reads ? ['-r'] : []),
          // what the reader keeps: the workspace's opens, the PATH's lookups (and every exec)
          '-w',
          opts.workspace,
          '-p',
          opts.pathEntries.join(':'),
          ...(identity ? ['-u', `${identity.uid}`, '-g', `${identity.gid}`] : []),
        ]
  return {
    argv: [...tracing, '--', ...wrappers, ...argv],
    env: Object.fromEntries(Object.entries(env).filter(([name]) => !held.some(([h]) => h === name))),
    async needs() {
      const started = Date.now()
      // preflight-trace says when its trace is whole; strace's is taken as whole once it has been quiet
      if (tracer.kind === 'seccomp') {
        const waiting = new AbortController()
        await Promise.race([ended, sleep(MAX_WAIT_MS, undefined, { signal: waiting.signal }).catch(() => {})])
        waiting.abort()
      } else
        while (Date.now() - last < QUIET_MS && Date.now() - started < MAX_WAIT_MS) await sleep(QUIET_MS / 2)
      lines.close()
      socket.destroy()
      // a tracer still tracing a process that escaped the run: strace goes on after a failed write
      stopTracersOf(fifo)
      rmSync(dir, { recursive: true, force: true })
      const needs = reader.needs()
      if (unreadable > 0)
        return {
          ...needs,
          cut: true,
          note: `${unreadable} traced calls could not be read (a process hid its memory from the tracer)`,
        }
      return bytes > MAX_TRACE_BYTES ? { ...needs, cut: true } : needs
    },
  }
}
