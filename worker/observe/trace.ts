// Setup and the agent run under strace when the worker observes (--observe; docs/attribution.md). The
// tracer runs as the worker, and `setpriv` switches the traced program to the slot's uid: the agent can
// neither stop its tracer nor write its trace, which goes to a file in a directory only the worker reads.
import { spawnSync } from 'node:child_process'
import { accessSync, constants, createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { AgentIdentity } from '../run/process.js'
import { type Needs, TRACED_CALLS, TraceReader } from './parse.js'

export interface Tracer {
  strace: string
  setpriv: string
  env: string
}

// Debian's packages, from the system's own directories only: never a program on the agent's PATH.
const SYSTEM_DIRS = ['/usr/bin', '/bin']

function program(name: string): string | undefined {
  for (const dir of SYSTEM_DIRS) {
    const path = join(dir, name)
    try {
      accessSync(path, constants.X_OK)
      if (statSync(path).isFile()) return path
    } catch {
      // not in this one
    }
  }
  return undefined
}

// The tracer this machine has and may use, or why there is none: installed, and allowed to trace (a
// container's seccomp profile or a missing capability refuses ptrace; strace then runs nothing at all).
export function findTracer(): Tracer | string {
  const strace = program('strace')
  const setpriv = program('setpriv')
  if (!strace) return 'strace is not installed (Debian: apt-get install strace)'
  const env = program('env')
  if (!setpriv || !env) return 'setpriv or env is not installed (Debian: util-linux, coreutils)'
  const probe = spawnSync(strace, [...OPTIONS, '-o', '/dev/null', '--', '/bin/true'], {
    env: {},
    encoding: 'utf8',
    timeout: 10_000,
  })
  if (probe.status !== 0)
    return `strace cannot trace here: ${probe.stderr.trim().split('\n')[0] ?? probe.error?.message}`
  return { strace, setpriv, env }
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
])
const isUnsecure = (name: string) => name.startsWith('LD_') || UNSECURE.has(name)

// A run's trace: the command line and environment that make it, and what it saw once the run is over.
export interface Trace {
  argv: string[]
  env: Record<string, string>
  // the programs before the traced one: setpriv, env(1)
  wrappers: number
  // `reads`: the workspace files read too (`preflight learn`)
  needs(workspace: string, pathEntries: readonly string[], reads?: boolean): Promise<Needs>
  dispose(): void
}

// Past this much trace the rest is not read (a test suite that opens millions of files): the record says cut.
const MAX_TRACE_BYTES = 256 * 1024 * 1024

export function traced(
  tracer: Tracer,
  argv: readonly string[],
  env: Record<string, string>,
  identity?: AgentIdentity,
): Trace {
  // mkdtemp makes it 0700: the worker's own
  const dir = mkdtempSync(join(tmpdir(), 'preflight-trace-'))
  const file = join(dir, 'trace')
  const calls = TRACED_CALLS.map((call) => `?${call}`).join(',')
  const held = identity ? Object.entries(env).filter(([name]) => isUnsecure(name)) : []
  const wrappers = [
    ...(identity
      ? [tracer.setpriv, `--reuid=${identity.uid}`, `--regid=${identity.gid}`, '--clear-groups', '--']
      : []),
    ...(held.length > 0 ? [tracer.env, ...held.map(([name, value]) => `${name}=${value}`)] : []),
  ]
  return {
    argv: [tracer.strace, ...OPTIONS, '-e', `trace=${calls}`, '-o', file, '--', ...wrappers, ...argv],
    env: Object.fromEntries(Object.entries(env).filter(([name]) => !held.some(([h]) => h === name))),
    wrappers: (identity ? 1 : 0) + (held.length > 0 ? 1 : 0),
    async needs(workspace, pathEntries, reads = false) {
      const reader = new TraceReader(workspace, pathEntries, this.wrappers, reads)
      const stream = createReadStream(file, { end: MAX_TRACE_BYTES - 1 })
      let read = 0
      stream.on('data', (chunk) => {
        read += chunk.length
      })
      try {
        for await (const line of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }))
          reader.line(line)
      } catch {
        // no trace at all: the tracer never started
        return { exec: [], paths: [], cut: true }
      }
      const needs = reader.needs()
      return read >= MAX_TRACE_BYTES ? { ...needs, cut: true } : needs
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  }
}
