// The tracers on real programs — preflight-trace (dist/, built by `npm run build`) and Debian's strace, each
// through the same tests — with real shells, a real uid switch, and agents that try to forge, stop or load
// code into their tracer. Without a tracer these skip, or fail with CI=true.
import { execFileSync, spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasMissingProgram, MAX_OBSERVED_EXEC } from '../../../src/contract/index.js'
import { Observation } from '../../../worker/observe/observation.js'
import { findTracer, refusal, type Tracer, type TracerKind, traced } from '../../../worker/observe/trace.js'
import { runProcess } from '../../../worker/run/process.js'
import { waitFor } from '../../support/wait.js'

const isRoot = process.getuid?.() === 0
const who = { uid: 64_700, gid: 64_700 }
// each tracer's process, by the name pgrep -x matches
const NAMES: Record<TracerKind, string> = { seccomp: 'preflight-trace', strace: 'strace' }

describe('findTracer', () => {
  it('prefers preflight-trace, falls back to strace, and says why not otherwise', () => {
    const found = findTracer()
    if (typeof found === 'string' && process.env.CI === 'true') throw new Error(found)
    if (typeof found === 'object')
      expect(found).toEqual({
        kind: 'seccomp',
        program: fileURLToPath(new URL('../../../dist/preflight-trace', import.meta.url)),
        env: expect.any(String),
        mkfifo: expect.any(String),
      })
    const strace = findTracer(['strace'])
    if (typeof strace === 'object')
      expect(strace).toEqual({
        kind: 'strace',
        program: '/usr/bin/strace',
        setpriv: expect.any(String),
        env: expect.any(String),
        mkfifo: expect.any(String),
      })
    else expect(strace).toMatch(/^no tracer: strace: /)
  })
})

// A stand-in for preflight-trace (the one mock here: when the real one's last lines arrive cannot be
// chosen) that writes its trace, and its last line, 0.3 s after the program has ended.
describe('the trace of preflight-trace', () => {
  it('is read until the tracer says it is whole, however late that comes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'preflight-late-trace-'))
    try {
      const late = join(root, 'late-trace')
      const line = '1 execve("/nowhere/pnpm", ["pnpm"], 0x0 /* 0 vars */) = -1 ENOENT (No such file)'
      writeFileSync(
        late,
        `#!/bin/sh\nfifo=$2\nwhile [ "$1" != -- ]; do shift; done; shift\n(sleep 0.3; echo '${line}'; echo 'preflight-trace: every traced process has ended') >"$fifo" 2>/dev/null &\nexec "$@"\n`,
        { mode: 0o755 },
      )
      const trace = traced(
        { kind: 'seccomp', program: late, env: '/usr/bin/env', mkfifo: '/usr/bin/mkfifo' },
        ['true'],
        { PATH: '/usr/bin:/bin' },
        { workspace: root, pathEntries: ['/nowhere'] },
      )
      const exited = spawnSync(trace.argv[0] as string, trace.argv.slice(1), { env: trace.env })
      expect(exited.status).toBe(0)
      expect((await trace.needs()).exec).toEqual([{ name: 'pnpm', ran: true }])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('preflight-trace itself', () => {
  const tracer = findTracer(['seccomp'])
  const program = typeof tracer === 'object' ? tracer.program : ''

  it.runIf(program)('is refused where it would run a program and see nothing of it', () => {
    expect(refusal([program])).toBeUndefined()
    const root = mkdtempSync(join(tmpdir(), 'preflight-blind-'))
    try {
      // what preflight-trace amounts to where it may not read a program's memory (Yama's ptrace_scope)
      const blind = join(root, 'blind')
      writeFileSync(blind, '#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done; shift\nexec "$@"\n', {
        mode: 0o755,
      })
      expect(refusal([blind])).toMatch(/saw nothing/)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  it.runIf(program)('refuses a uid of 0 or past 32 bits, and says when its supervisor cannot start', () => {
    for (const uid of ['0', '4294967296', '-1', '1x']) {
      const run = spawnSync(program, ['-o', '/dev/null', '-u', uid, '-g', '1000', '--', 'true'], {
        encoding: 'utf8',
      })
      expect([run.status, run.stderr]).toEqual([127, `preflight-trace: not a uid or gid: ${uid}\n`])
    }
    // never killed by the write to a supervisor that is gone (SIGPIPE): 127 and why, every time
    for (let i = 0; i < 100; i++) {
      const run = spawnSync(program, ['-o', '/nowhere/trace', '--', 'true'], { encoding: 'utf8' })
      expect([run.status, run.signal, run.stderr]).toEqual([
        127,
        null,
        expect.stringMatching(/the supervisor could not start/),
      ])
    }
  })
})

describe.runIf(isRoot)('preflight-trace started by a uid that may not switch', () => {
  const tracer = findTracer(['seccomp'])
  it.runIf(typeof tracer === 'object')('refuses to run the program rather than run it as another uid', () => {
    const program = (tracer as Tracer).program
    // as 64,710 (not the agent uid of the tests below, which could signal what this leaves), asked to
    // run the program as 64,711: neither the program nor the supervisor (as its filesystem uid) can
    // become that, and the program is refused before anything of it runs
    const run = spawnSync(
      'setpriv',
      [
        '--reuid=64710',
        '--regid=64710',
        '--clear-groups',
        '--',
        program,
        '-o',
        '/dev/null',
        '-u',
        '64711',
        '-g',
        '64711',
        '--',
        'echo',
        'ran',
      ],
      { encoding: 'utf8' },
    )
    expect(run.stdout).toBe('')
    expect(run.status).toBe(127)
    expect(run.stderr).toMatch(/^preflight-trace: setgroups: Operation not permitted/)
  })
})

describe.each(['seccomp', 'strace'] as const)('a program traced by %s', (kind) => {
  const tracer = findTracer([kind])
  if (typeof tracer === 'string' && process.env.CI === 'true') it('has its tracer', () => expect.fail(tracer))
  describe.runIf(typeof tracer === 'object')('', () => tracedProgram(kind, tracer as Tracer))
})

function tracedProgram(kind: TracerKind, tracer: Tracer): void {
  let root: string
  let workspace: string
  let bin: string
  const PATH = () => `${bin}:/usr/local/bin:/usr/bin:/bin`

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'preflight-observe-'))
    chmodSync(root, 0o755)
    workspace = join(root, 'ws')
    bin = join(root, 'bin')
    mkdirSync(workspace)
    mkdirSync(bin)
    writeFileSync(join(workspace, 'there.txt'), 'x')
    writeFileSync(join(bin, 'tool'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    // what a shell cannot do: open by a directory's descriptor, and start a program the way
    // posix_spawn does (a vfork: the child runs in its parent's memory until its exec)
    writeFileSync(
      join(root, 'probe.c'),
      `#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/wait.h>
extern char **environ;
// a thread started once its process is not dumpable: the tracer has never read its memory
static void *hidden(void *arg) { open("hidden.txt", O_RDONLY); return arg; }
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "dirfd") == 0) return openat(open("sub", O_RDONLY | O_DIRECTORY), "nope.txt", O_RDONLY) >= 0;
  if (argc > 1 && strcmp(argv[1], "hide") == 0) {
    pthread_t t;
    prctl(PR_SET_DUMPABLE, 0);
    pthread_create(&t, 0, hidden, 0);
    return pthread_join(t, 0);
  }
  pid_t pid;
  char *cat[] = {"cat", "spawned-missing.txt", 0};
  if (posix_spawnp(&pid, "cat", 0, 0, cat, environ) != 0) return 2;
  return waitpid(pid, 0, 0) != pid;
}
`,
    )
    execFileSync('cc', ['-pthread', '-o', join(bin, 'probe'), join(root, 'probe.c')])
    mkdirSync(join(workspace, 'sub'))
    // a PATH entry the agent may not search, holding a program it cannot reach
    mkdirSync(join(root, 'sealed'), { mode: 0o700 })
    writeFileSync(join(root, 'sealed', 'sealed-tool'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    if (isRoot) execFileSync('chown', ['-R', `${who.uid}:${who.gid}`, workspace])
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  async function observe(
    script: string,
    env: Record<string, string> = {},
    identity = isRoot ? who : undefined,
  ) {
    const observation = new Observation(tracer)
    const run = await observation.run(
      workspace,
      ['sh', '-c', script],
      { PATH: PATH(), HOME: workspace, ...env },
      identity,
      (argv, runEnv, as) =>
        runProcess(argv, { cwd: workspace, env: runEnv, ...(as ? { identity: as } : {}) }),
    )
    return { run, ...observation.record({ exec: ['tool'], paths: ['there.txt'] }, ['sh']) }
  }

  it('records a program missing from every PATH entry, one found, and a workspace file that was not there', async () => {
    const { run, observed, undeclared } = await observe(
      'pnpm install; tool; cat there.txt missing.txt; ls >/dev/null; exit 3',
    )
    expect(run.exitCode).toBe(3)
    expect(observed?.source).toBe('trace')
    // every call was read: nothing cut, nothing to say
    expect(observed?.cut).toBeUndefined()
    expect(observed?.note).toBe(
      isRoot ? undefined : 'the agent ran as the worker’s own uid: it could reach its tracer',
    )
    expect(observed?.exec).toContainEqual({ name: 'pnpm', ran: true })
    expect(observed?.exec).toContainEqual({ name: 'tool', path: join(bin, 'tool'), ran: true })
    expect(observed?.exec).toContainEqual({ name: 'cat', path: expect.stringMatching(/\/cat$/), ran: true })
    expect(observed?.paths).toEqual(['missing.txt'])
    expect(undeclared).toContainEqual({
      kind: 'exec',
      name: 'pnpm',
      state: 'missing',
      searched: PATH(),
      tried: 'run',
      step: 'agent',
    })
    expect(undeclared).toContainEqual({
      kind: 'exec',
      name: 'ls',
      state: 'present',
      path: expect.stringMatching(/\/ls$/),
      step: 'agent',
    })
    expect(undeclared).toContainEqual({ kind: 'paths', path: 'missing.txt', state: 'missing' })
    // declared: the exec requirement, the path pattern and the agent's own program
    expect(undeclared?.map((need) => ('name' in need ? need.name : need.path))).not.toContain('tool')
    expect(undeclared).not.toContainEqual(expect.objectContaining({ name: 'sh' }))
  })

  it('tells a program looked up (command -v) from one run, and holds the record to its bounds', async () => {
    const { undeclared } = await observe(
      'if command -v pnpm >/dev/null; then pnpm i; else echo no pnpm; fi; exit 1',
    )
    expect(undeclared).toContainEqual(
      expect.objectContaining({ name: 'pnpm', state: 'missing', tried: 'lookup' }),
    )
    expect(hasMissingProgram(undeclared)).toBe(false)
    const many = await observe('for i in $(seq 250); do command -v nowhere$i; done; exit 0')
    expect(many.observed?.exec.length).toBeLessThanOrEqual(MAX_OBSERVED_EXEC)
    expect(many.observed?.cut).toBe(true)
  })

  it('takes how the agent tried a name from the agent’s own run, not from setup’s', async () => {
    const observation = new Observation(tracer)
    const env = { PATH: PATH(), HOME: workspace }
    const as = isRoot ? who : undefined
    const start = (argv: readonly string[], runEnv: Record<string, string>, id?: typeof who) =>
      runProcess(argv, { cwd: workspace, env: runEnv, ...(id ? { identity: id } : {}) })
    await observation.run(workspace, ['sh', '-c', 'pnpm install || true'], env, as, start, 'setup')
    await observation.run(workspace, ['sh', '-c', 'command -v pnpm || exit 1'], env, as, start, 'agent')
    const { undeclared } = observation.record(undefined, ['sh'])
    expect(undeclared).toContainEqual(
      expect.objectContaining({ name: 'pnpm', tried: 'lookup', step: 'agent' }),
    )
    expect(hasMissingProgram(undeclared)).toBe(false)
  })

  it('resolves a path against the descriptor it was opened from, and reads a spawned child’s own calls', async () => {
    const { run, observed } = await observe(
      `probe dirfd; setarch -R probe spawn; cat ${root}/bin/../ws/dotted.txt 2>/dev/null; exit 0`,
    )
    expect(run.exitCode).toBe(0)
    // the last one named through a directory beside the workspace, and ".."
    expect(observed?.paths.sort()).toEqual(['dotted.txt', 'spawned-missing.txt', 'sub/nope.txt'])
    expect(observed?.exec).toContainEqual({ name: 'cat', path: expect.stringMatching(/\/cat$/), ran: true })
  })

  it.runIf(isRoot)('counts the wrapper’s exec as one, wherever env(1) is', async () => {
    // LD_* go to the program through env(1), in /usr/bin, which this PATH does not have
    const { observed } = await observe('tool; exit 0', { PATH: `${bin}:/bin`, LD_BIND_NOW: '1' })
    expect(observed?.exec).toEqual([
      { name: 'sh', path: '/bin/sh', ran: true },
      { name: 'tool', path: join(bin, 'tool'), ran: true },
    ])
  })

  it('never counts a file the program made as one it needed', async () => {
    const { observed } = await observe('echo x > made.txt; cat made.txt; rm made.txt; cat gone.txt; exit 0')
    expect(observed?.paths).toEqual(['gone.txt'])
  })

  it.runIf(isRoot)('sees a PATH entry through another process’s root as the agent does: closed', async () => {
    // the test's own process is root's: the agent may not look through /proc/PID/root, nor may its tracer
    const { observed } = await observe('ls >/dev/null; exit 0', {
      PATH: `/proc/${process.pid}/root/usr/bin:${PATH()}`,
    })
    expect(observed?.exec).toContainEqual({ name: 'ls', path: '/usr/bin/ls', ran: true })
  })

  it.runIf(isRoot)('says so when a process hid some of its calls from preflight-trace', async () => {
    const { observed } = await observe('probe hide; exit 0')
    // ptrace reads a process that is not dumpable all the same
    if (kind === 'strace') return expect(observed?.paths).toContain('hidden.txt')
    expect(observed?.paths).not.toContain('hidden.txt')
    expect(observed?.cut).toBe(true)
    expect(observed?.note).toMatch(/\d+ traced calls could not be read \(a process hid its memory/)
  })

  it.runIf(isRoot)(
    'sees a PATH entry as the agent does: one it may not search has nothing in it',
    async () => {
      const sealed = join(root, 'sealed')
      const { observed } = await observe('sealed-tool; exit 0', { PATH: `${sealed}:${PATH()}` })
      expect(observed?.exec).toContainEqual({ name: 'sealed-tool', ran: true })
    },
  )

  it('keeps the program’s exit code, output and uid as without the tracer', async () => {
    const { run } = await observe('id -u; echo out; exit 7')
    expect(run.exitCode).toBe(7)
    expect(run.tail).toBe(`${isRoot ? who.uid : process.getuid?.()}\nout`)
  })

  describe.runIf(isRoot)('against an agent', () => {
    it('cannot stop its tracer, nor read or write its trace', async () => {
      const { run, observed } = await observe(
        `for p in $(pgrep -x ${NAMES[kind]}); do kill -9 $p && echo killed $p; done; ` +
          `for f in ${tmpdir()}/preflight-trace-*/trace; do echo forged >> $f && echo wrote $f; cat $f >/dev/null && echo read $f; done; ` +
          'pnpm; exit 0',
      )
      expect(run.tail).not.toMatch(/^(killed|wrote|read) /m)
      // the tracer was still there to see what came after
      expect(observed?.exec).toContainEqual({ name: 'pnpm', ran: true })
    })

    it('cannot keep its tracer writing after its run: the tracer of an escaped process dies with the FIFO', async () => {
      const stamp = `escaped-${process.pid}`
      await observe(
        `setsid sh -c 'while :; do ls /nowhere-${stamp} 2>/dev/null; sleep 0.05; done' & sleep 0.3; exit 0`,
      )
      const tracers = () =>
        spawnSync('pgrep', ['-x', NAMES[kind]], { encoding: 'utf8' })
          .stdout.trim()
          .split('\n')
          .filter(Boolean)
      await waitFor(() => tracers().length === 0, { timeoutMs: 5_000, what: 'the tracer gone' })
      spawnSync('pkill', ['-f', `nowhere-${stamp}`])
    })

    it('cannot pass what it prints for its trace', async () => {
      const forged = [
        'echo \'999 execve("/usr/bin/forged", ["forged"], 0x1 /* 1 var */) = 0\'',
        'echo \'999 openat(AT_FDCWD</x>, "planted.txt", O_RDONLY) = -1 ENOENT (No such file or directory)\' >&2',
        'echo "sh: 1: fake-tool: not found" >&2',
      ].join('; ')
      const { observed } = await observe(forged)
      expect(observed?.exec.map((need) => need.name)).not.toContain('forged')
      expect(observed?.exec.map((need) => need.name)).not.toContain('fake-tool')
      expect(observed?.paths).toEqual([])
    })

    it('cannot have its tracer load a library: LD_* reach the agent only, after the uid switch', async () => {
      const lib = join(root, 'evil.so')
      const src = join(root, 'evil.c')
      const marker = join(root, 'loaded-by')
      writeFileSync(
        src,
        `#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void init(void) { FILE *f = fopen("${marker}", "a"); if (f) { fprintf(f, "%d\\n", (int)getuid()); fclose(f); } }\n`,
      )
      execFileSync('cc', ['-shared', '-fPIC', '-o', lib, src])
      chmodSync(root, 0o777)
      try {
        const { run } = await observe('echo "$LD_PRELOAD"', { LD_PRELOAD: lib })
        expect(run.tail).toBe(lib)
      } finally {
        chmodSync(root, 0o755)
      }
      const uids = readFileSync(marker, 'utf8').trim().split('\n')
      expect(uids.length).toBeGreaterThan(0)
      expect(new Set(uids)).toEqual(new Set([`${who.uid}`]))
    })
  })

  it('ends its trace, and leaves nothing of it, when the run cannot start', async () => {
    const under = mkdtempSync(join(tmpdir(), 'preflight-unstarted-'))
    try {
      const observation = new Observation(tracer, under)
      const start = async (): Promise<never> => {
        throw new Error('no start')
      }
      await expect(observation.run(workspace, ['true'], { PATH: PATH() }, undefined, start)).rejects.toThrow(
        'no start',
      )
      expect(readdirSync(under)).toEqual([])
    } finally {
      rmSync(under, { recursive: true, force: true })
    }
  })

  it('leaves nothing of the trace behind', async () => {
    const before = spawnSync('sh', ['-c', 'ls -d /tmp/preflight-trace-* 2>/dev/null | wc -l'], {
      encoding: 'utf8',
    })
    await observe('true')
    const after = spawnSync('sh', ['-c', 'ls -d /tmp/preflight-trace-* 2>/dev/null | wc -l'], {
      encoding: 'utf8',
    })
    expect(after.stdout).toBe(before.stdout)
    expect(existsSync(workspace)).toBe(true)
  })
}
