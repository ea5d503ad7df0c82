import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, copyFileSync, linkSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkExec } from '../../../worker/checks/exec.js'
import { type AgentIdentity, verify } from '../../../worker/checks/index.js'
import { resolveOnDirs } from '../../../worker/checks/resolve.js'
import { context, link, sharedDir, testDir, write } from '../../support/checks.js'
import { failingMount } from '../../support/failing-mount.js'

const SCRIPT = '#!/bin/sh\nexit 0\n'

// A real PATH directory holding an executable `name`.
function binDir(name: string): string {
  const dir = testDir('preflight-bin-')
  write(dir, name, SCRIPT, 0o755)
  return dir
}

function onPath(ws: string, ...dirs: string[]) {
  return context(ws, {}, { env: { PATH: dirs.join(':') } })
}

describe('exec', () => {
  it('resolves on the agent PATH in order, naming the binary, its path and real path', async () => {
    const first = binDir('tool')
    const second = binDir('tool')
    expect(await checkExec('tool', onPath(testDir(), first, second))).toEqual({
      status: 'met',
      observed: { name: 'tool', path: join(first, 'tool'), realpath: join(first, 'tool') },
    })
  })

  it("resolves on the agent's PATH, not the worker's", async () => {
    const ws = testDir()
    const finding = await checkExec('node', onPath(ws, testDir()))
    expect(finding).toMatchObject({ status: 'unmet', reason: 'not-found', observed: { name: 'node' } })
  })

  it('rejects a directory that shadows a binary earlier on PATH', async () => {
    const shadow = testDir()
    mkdirSync(join(shadow, 'pnpm'))
    const ws = testDir()
    expect(await checkExec('pnpm', onPath(ws, shadow))).toEqual({
      status: 'unmet',
      reason: 'not-found',
      observed: {
        name: 'pnpm',
        searched: [shadow],
        rejected: [{ path: join(shadow, 'pnpm'), why: 'directory' }],
      },
    })
    const real = binDir('pnpm')
    expect(await checkExec('pnpm', onPath(ws, shadow, real))).toMatchObject({
      status: 'met',
      observed: { path: join(real, 'pnpm') },
    })
  })

  it('rejects a file without the execute bit', async () => {
    const dir = testDir()
    write(dir, 'make', SCRIPT, 0o644)
    const finding = await checkExec('make', onPath(testDir(), dir))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { name: 'make', rejected: [{ path: join(dir, 'make'), why: 'not-executable' }] },
    })
  })

  it('rejects a dangling symlink', async () => {
    const dir = testDir()
    link(dir, 'yarn', join(dir, 'gone'))
    const finding = await checkExec('yarn', onPath(testDir(), dir))
    expect(finding.observed.rejected).toEqual([{ path: join(dir, 'yarn'), why: 'dangling-symlink' }])
  })

  it('follows a symlink to an executable and reports its real path', async () => {
    const real = binDir('node-20')
    const dir = testDir()
    link(dir, 'node', join(real, 'node-20'))
    expect(await checkExec('node', onPath(testDir(), dir))).toEqual({
      status: 'met',
      observed: { name: 'node', path: join(dir, 'node'), realpath: join(real, 'node-20') },
    })
  })

  it('resolves an empty or relative PATH entry against the workspace', async () => {
    const ws = testDir()
    write(ws, 'bin/gen', SCRIPT, 0o755)
    write(ws, 'here', SCRIPT, 0o755)
    expect(await checkExec('gen', onPath(ws, 'bin'))).toMatchObject({
      status: 'met',
      observed: { path: join(ws, 'bin/gen') },
    })
    const empty = context(ws, {}, { env: { PATH: `${testDir()}:` } })
    expect(await checkExec('here', empty)).toMatchObject({
      status: 'met',
      observed: { path: join(ws, 'here') },
    })
  })

  it('is unmet with nothing searched when the agent environment has no PATH', async () => {
    const finding = await checkExec('sh', context(testDir(), {}, { env: {} }))
    expect(finding).toEqual({
      status: 'unmet',
      reason: 'not-found',
      observed: { name: 'sh', searched: [], rejected: [] },
    })
  })

  it('skips PATH entries that do not exist or are files', async () => {
    const file = write(testDir(), 'not-a-dir')
    const real = binDir('tool')
    const finding = await checkExec('tool', onPath(testDir(), '/nonexistent/dir', file, real))
    expect(finding).toMatchObject({ status: 'met', observed: { path: join(real, 'tool') } })
  })

  // A PATH directory this process may not search: stat answers EACCES, which is not "missing" and must
  // not abort the check; the candidate is rejected as not-executable and the search goes on. Root is
  // never refused while it holds CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so as root the resolution runs
  // in a child without them (setpriv, the TypeScript source through tsx), still as root and so able to read it.
  it('rejects a candidate in a directory it may not search, and goes on', () => {
    const root = testDir()
    const locked = join(root, 'locked')
    write(locked, 'tool', SCRIPT, 0o755)
    const open = join(root, 'open')
    write(open, 'tool', SCRIPT, 0o755)
    chmodSync(locked, 0o000)
    try {
      expect(resolveAsUnprivileged('tool', [locked, open])).toEqual({
        found: join(open, 'tool'),
        rejected: [{ path: join(locked, 'tool'), why: 'not-executable' }],
      })
    } finally {
      chmodSync(locked, 0o755)
    }
  })
})

// A FIFO, a socket or a device passes access(X_OK) once it has execute bits, and execve refuses it: only a
// regular file counts.
describe('exec: what is not a regular file', () => {
  const special: Record<string, (path: string) => Promise<void> | void> = {
    FIFO: (path) => void execFileSync('mkfifo', [path]),
    // closing a server unlinks its socket: a second name for it stays
    socket: (path) =>
      new Promise((resolve) => {
        const server = createServer().listen(`${path}.sock`, () => {
          linkSync(`${path}.sock`, path)
          server.close(() => resolve())
        })
      }),
  }
  // mknod needs root; CI runs as root
  if (process.getuid?.() === 0)
    special['character device'] = (path) => void execFileSync('mknod', [path, 'c', '1', '3'])

  it.each(Object.entries(special))(
    'rejects a %s with mode 755 as not-executable, and takes the file after it',
    async (_kind, make) => {
      const dir = testDir()
      const path = join(dir, 'tool')
      await make(path)
      chmodSync(path, 0o755)
      const ws = testDir()
      expect(await checkExec('tool', onPath(ws, dir))).toEqual({
        status: 'unmet',
        reason: 'not-found',
        observed: { name: 'tool', searched: [dir], rejected: [{ path, why: 'not-executable' }] },
      })
      const real = binDir('tool')
      expect(await checkExec('tool', onPath(ws, dir, real))).toMatchObject({
        status: 'met',
        observed: { path: join(real, 'tool') },
      })
    },
  )
})

// The kernel answers an earlier PATH entry with an errno that is neither "not there" nor "not allowed": the
// check cannot know what execvp would find there, so it decides nothing (error), never the later entry.
describe('exec: an unexpected error on PATH', () => {
  it('is error check-failed for EIO on an earlier entry, even with the binary later on PATH', async (ctx) => {
    const broken = await failingMount('EIO')
    if (!broken) return ctx.skip()
    const verdict = await verify(
      { exec: ['tool'] },
      { workspace: testDir(), env: { PATH: `${broken}:${binDir('tool')}` } },
    )
    expect(verdict.results[0]).toMatchObject({
      status: 'error',
      reason: 'check-failed',
      observed: { message: expect.stringContaining('EIO') },
    })
  })

  // the name is not there for stat, and then the look at whether it is a dangling link fails
  it('is error check-failed for EIO while telling a miss from a dangling link', async (ctx) => {
    const flaky = await failingMount('ENOENT', 'EIO')
    if (!flaky) return ctx.skip()
    const verdict = await verify(
      { exec: ['tool'] },
      { workspace: testDir(), env: { PATH: `${flaky}:${binDir('tool')}` } },
    )
    expect(verdict.results[0]).toMatchObject({
      status: 'error',
      reason: 'check-failed',
      observed: { message: expect.stringContaining('EIO') },
    })
  })

  it('is error check-failed for EIO behind a link on PATH, not a dangling link to pass over', async (ctx) => {
    const broken = await failingMount('EIO')
    if (!broken) return ctx.skip()
    const dir = testDir()
    link(dir, 'tool', join(broken, 'tool'))
    const verdict = await verify(
      { exec: ['tool'] },
      { workspace: testDir(), env: { PATH: `${dir}:${binDir('tool')}` } },
    )
    expect(verdict.results[0]).toMatchObject({ status: 'error', reason: 'check-failed' })
  })

  it.for(['EACCES', 'EPERM'] as const)(
    'rejects a candidate it is refused (%s) as not-executable, and goes on',
    async (code, ctx) => {
      const refused = await failingMount(code)
      if (!refused) return ctx.skip()
      const real = binDir('tool')
      expect(await checkExec('tool', onPath(testDir(), refused, real))).toEqual({
        status: 'met',
        observed: { name: 'tool', path: join(real, 'tool'), realpath: join(real, 'tool') },
      })
      expect((await checkExec('tool', onPath(testDir(), refused))).observed.rejected).toEqual([
        { path: join(refused, 'tool'), why: 'not-executable' },
      ])
    },
  )

  it('skips an entry that is a link loop or a name too long, as execvp does, and lists no plain miss', async () => {
    const dir = testDir()
    link(dir, 'loop', join(dir, 'loop'))
    const tooLong = `/${'x'.repeat(5000)}`
    const real = binDir('tool')
    const ws = testDir()
    expect(await checkExec('tool', onPath(ws, join(dir, 'loop'), tooLong, testDir(), real))).toMatchObject({
      status: 'met',
      observed: { path: join(real, 'tool') },
    })
    expect(
      (await checkExec('tool', onPath(ws, join(dir, 'loop'), tooLong, testDir()))).observed.rejected,
    ).toEqual([])
  })
})

function resolveAsUnprivileged(name: string, dirs: string[]): unknown {
  if (process.getuid?.() !== 0) return resolveOnDirs(name, dirs)
  const module = new URL('../../../worker/checks/resolve.ts', import.meta.url).href
  const script = `const { resolveOnDirs } = await import(${JSON.stringify(module)})
process.stdout.write(JSON.stringify(resolveOnDirs(${JSON.stringify(name)}, ${JSON.stringify(dirs)})))`
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]
  const out = execFileSync('setpriv', ['--bounding-set=-dac_override,-dac_read_search', ...node], {
    encoding: 'utf8',
  })
  return JSON.parse(out)
}

// Another uid than this process's: the files a test creates are not the agent's, unless chowned to it.
const AGENT = { uid: 4242, gid: 4242 }

function asAgent(ws: string, agent: AgentIdentity, ...dirs: string[]) {
  return context(ws, {}, { env: { PATH: dirs.join(':') }, agent })
}

describe('exec as the agent', () => {
  it('is unmet for a tool of mode 0700 owned by another uid, and takes a usable one later on PATH', async () => {
    const locked = sharedDir()
    write(locked, 'tool', SCRIPT, 0o700)
    const ws = sharedDir()
    expect(await checkExec('tool', onPath(ws, locked))).toMatchObject({ status: 'met' })
    expect(await checkExec('tool', asAgent(ws, AGENT, locked))).toEqual({
      status: 'unmet',
      reason: 'not-found',
      observed: {
        name: 'tool',
        searched: [locked],
        rejected: [{ path: join(locked, 'tool'), why: 'not-executable' }],
      },
    })
    const open = sharedDir()
    write(open, 'tool', SCRIPT, 0o755)
    expect(await checkExec('tool', asAgent(ws, AGENT, locked, open))).toMatchObject({
      status: 'met',
      observed: { path: join(open, 'tool') },
    })
  })

  it('passes over a PATH directory the agent may not search, listing the candidate as unreachable', async () => {
    const root = sharedDir()
    const closed = join(root, 'closed')
    write(closed, 'tool', SCRIPT, 0o755)
    chmodSync(closed, 0o700)
    const open = join(root, 'open')
    write(open, 'tool', SCRIPT, 0o755)
    expect(await checkExec('tool', asAgent(sharedDir(), AGENT, closed, open))).toEqual({
      status: 'met',
      observed: { name: 'tool', path: join(open, 'tool'), realpath: join(open, 'tool') },
    })
    expect(await checkExec('tool', asAgent(sharedDir(), AGENT, closed))).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: join(closed, 'tool'), why: 'unreachable' }] },
    })
  })

  it('rejects a symlink on PATH whose target lies in a directory the agent may not search', async () => {
    const root = sharedDir()
    write(root, 'closed/tool-1.0', SCRIPT, 0o755)
    chmodSync(join(root, 'closed'), 0o700)
    link(root, 'bin/tool', join(root, 'closed/tool-1.0'))
    expect(await checkExec('tool', asAgent(sharedDir(), AGENT, join(root, 'bin')))).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: join(root, 'bin/tool'), why: 'unreachable' }] },
    })
  })

  // Files are created with this process's gid: an agent of that gid (and another uid) is in their group.
  it("applies the group bits when the file's gid is the agent's, even where other bits would allow", async () => {
    const agent = { uid: AGENT.uid, gid: process.getgid?.() ?? 0 }
    const dir = sharedDir()
    write(dir, 'grouped', SCRIPT, 0o710)
    write(dir, 'others-only', SCRIPT, 0o701)
    expect(await checkExec('grouped', asAgent(sharedDir(), agent, dir))).toMatchObject({ status: 'met' })
    expect(await checkExec('others-only', asAgent(sharedDir(), agent, dir))).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: join(dir, 'others-only'), why: 'not-executable' }] },
    })
  })

  it('is met for a tool of mode 0700 owned by the agent uid', async () => {
    const dir = sharedDir()
    const tool = write(dir, 'tool', SCRIPT, 0o700)
    // as root the file is given to AGENT; otherwise the agent is this uid (never root: root's rule differs)
    const agent = process.getuid?.() === 0 ? AGENT : { uid: process.getuid?.() ?? 0, gid: AGENT.gid }
    if (process.getuid?.() === 0) chownSync(tool, AGENT.uid, AGENT.gid)
    expect(await checkExec('tool', asAgent(sharedDir(), agent, dir))).toMatchObject({
      status: 'met',
      observed: { path: tool },
    })
    chmodSync(tool, 0o077)
    expect(await checkExec('tool', asAgent(sharedDir(), agent, dir))).toMatchObject({ status: 'unmet' })
  })
})

// The emulation against the kernel: execve run as the agent's uid/gid (no supplementary groups, as
// node's spawn with uid/gid sets them) must agree with checkExec for every fixture. Needs root to
// give files away and to switch uid; CI runs as root.
describe.runIf(process.getuid?.() === 0)('exec as the agent, against the kernel', () => {
  const OTHER = 4343
  const TRUE_BIN = realpathSync('/bin/true')

  interface Fixture {
    agent: AgentIdentity
    dir?: [mode: number, uid: number, gid: number]
    file?: [mode: number, uid: number, gid: number]
    // a symlink in an open PATH directory to the tool, through a hop directory when given
    via?: 'link' | 'hop'
  }

  const fixtures: Record<string, Fixture> = {
    'other bits': { agent: AGENT, file: [0o755, OTHER, OTHER] },
    'no bit for other': { agent: AGENT, file: [0o770, OTHER, OTHER] },
    'group bits, gid matches': { agent: AGENT, file: [0o710, OTHER, AGENT.gid] },
    'group bits decide over other': { agent: AGENT, file: [0o701, OTHER, AGENT.gid] },
    'owner bits, uid matches': { agent: AGENT, file: [0o700, AGENT.uid, OTHER] },
    'owner bits decide over group and other': { agent: AGENT, file: [0o077, AGENT.uid, AGENT.gid] },
    'directory closed': { agent: AGENT, dir: [0o700, OTHER, OTHER] },
    'directory searchable by other': { agent: AGENT, dir: [0o711, OTHER, OTHER] },
    'directory searchable by group': { agent: AGENT, dir: [0o710, OTHER, AGENT.gid] },
    'directory: group bits decide over other': { agent: AGENT, dir: [0o701, OTHER, AGENT.gid] },
    'symlink into a closed directory': { agent: AGENT, dir: [0o700, OTHER, OTHER], via: 'link' },
    'symlink chain through a closed directory': { agent: AGENT, via: 'hop' },
    'root, no execute bit': { agent: { uid: 0, gid: 0 }, file: [0o644, OTHER, OTHER] },
    'root, a group execute bit': { agent: { uid: 0, gid: 0 }, file: [0o610, OTHER, OTHER] },
    'root, closed directory': { agent: { uid: 0, gid: 0 }, dir: [0o000, OTHER, OTHER] },
  }

  // <root>/<n>/tool is what PATH finds: the binary itself, or a symlink to <root>/<n>/target/tool.
  function build(root: string, n: number, fixture: Fixture): string {
    const at = join(root, String(n))
    const home = fixture.via ? join(at, 'target') : at
    mkdirSync(home, { recursive: true })
    copyFileSync(TRUE_BIN, join(home, 'tool'))
    const [fileMode, fileUid, fileGid] = fixture.file ?? [0o755, OTHER, OTHER]
    chownSync(join(home, 'tool'), fileUid, fileGid)
    chmodSync(join(home, 'tool'), fileMode)
    if (fixture.via === 'link') symlinkSync(join(home, 'tool'), join(at, 'tool'))
    if (fixture.via === 'hop') {
      mkdirSync(join(at, 'hop'))
      symlinkSync('../target/tool', join(at, 'hop/tool'))
      chmodSync(join(at, 'hop'), 0o700)
      symlinkSync('hop/tool', join(at, 'tool'))
    }
    const [dirMode, dirUid, dirGid] = fixture.dir ?? [0o755, OTHER, OTHER]
    chownSync(home, dirUid, dirGid)
    chmodSync(home, dirMode)
    return at
  }

  function kernelRuns(tool: string, agent: AgentIdentity): boolean {
    const run = spawnSync('/bin/sh', ['-c', 'exec "$0"', tool], { uid: agent.uid, gid: agent.gid, cwd: '/' })
    return run.status === 0
  }

  it('agrees with execve run as the agent uid/gid', async () => {
    const root = sharedDir()
    const kernel: Record<string, boolean> = {}
    const ours: Record<string, boolean> = {}
    for (const [n, [label, fixture]] of Object.entries(fixtures).entries()) {
      const dir = build(root, n, fixture)
      kernel[label] = kernelRuns(join(dir, 'tool'), fixture.agent)
      ours[label] = (await checkExec('tool', asAgent(sharedDir(), fixture.agent, dir))).status === 'met'
    }
    expect(ours).toEqual(kernel)
    // not vacuous: the fixtures hold both verdicts
    expect(new Set(Object.values(kernel))).toEqual(new Set([true, false]))
  })
})
