import { execFileSync } from 'node:child_process'
import { getEventListeners } from 'node:events'
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { verify } from '../../../worker/checks/index.js'
import {
  allowedTransport,
  findGit,
  type Git,
  GitAbortedError,
  GitUnavailableError,
  gitEnvironment,
  gitSafetyArgs,
  runGit,
} from '../../../worker/run/git-env.js'
import { scratchHomeIn } from '../../../worker/run/git-home.js'
import { repoWithCommit, testDir, write } from '../../support/checks.js'
import { failingMount } from '../../support/failing-mount.js'
import { diesWithin, git, promisorTrap } from '../../support/git-fixtures.js'
import { waitFor } from '../../support/wait.js'

const PATH = process.env.PATH ?? ''
// The worker's git, found the first time a test asks (never while this file loads: code run at load
// and again by tests is what mutation testing cannot attribute, docs/mutation.md "Static mutants").
let found: Git | undefined
const trusted = (): Git => (found ??= findGit(PATH, []))

// A repository whose config and hooks would run a command that leaves a marker file behind.
function trappedRepo(): { ws: string; marker: string } {
  const ws = repoWithCommit()
  const marker = join(testDir(), 'ran')
  const trap = write(testDir(), 'trap.sh', `#!/bin/sh\ntouch ${marker}\nexit 0\n`, 0o755)
  git(ws, 'config', 'core.fsmonitor', trap)
  write(ws, '.git/hooks/pre-commit', `#!/bin/sh\ntouch ${marker}\n`, 0o755)
  write(ws, '.git/hooks/post-checkout', `#!/bin/sh\ntouch ${marker}\n`, 0o755)
  return { ws, marker }
}

describe('gitEnvironment', () => {
  it('is built from scratch: PATH and the fixed set, nothing else', () => {
    expect(gitEnvironment('/usr/bin', '/scratch')).toEqual({
      PATH: '/usr/bin',
      HOME: '/scratch',
      GIT_CONFIG_GLOBAL: '/dev/null',
      XDG_CONFIG_HOME: '/dev/null',
      LANG: 'C',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_NO_LAZY_FETCH: '1',
    })
  })

  // The scratch HOME is shared by the worker's git runs and writable by the agent (same uid): files
  // planted there after the worker checked it must not reach git.
  it('keeps a planted global config or ignore file from git', async () => {
    const ws = repoWithCommit()
    write(ws, 'untracked.txt')
    const planted = testDir()
    const hideAll = write(planted, 'hide-all', '*\n')
    write(planted, '.gitconfig', `[user]\n\tname = planted\n[core]\n\texcludesFile = ${hideAll}\n`)
    write(planted, '.config/git/ignore', '*\n')
    const run = (...args: string[]) => runGit(ws, args, { git: trusted(), env: { HOME: planted } })
    expect((await run('ls-files', '--others', '--exclude-standard')).stdout).toBe('untracked.txt')
    expect((await run('config', 'user.name')).exitCode).toBe(1)
  })

  it('leaves PATH out when there is none', () => {
    expect(gitEnvironment(undefined, '/scratch')).not.toHaveProperty('PATH')
  })
})

describe('gitSafetyArgs', () => {
  it('switches off fsmonitor and hooks and trusts the workspace', () => {
    const args = gitSafetyArgs('/work/ws').join(' ')
    expect(args).toContain('-c core.fsmonitor=false')
    expect(args).toContain('-c core.hooksPath=/dev/null')
    expect(args).toContain('-c safe.directory=/work/ws')
  })

  // git checks ownership of the real path: a workspace given through a link is trusted by both names.
  it('trusts a workspace by the name given and by its real path, and a missing one by its name only', () => {
    const real = testDir()
    const ws = join(testDir(), 'via-link')
    symlinkSync(real, ws)
    expect(gitSafetyArgs(ws).filter((arg) => arg.startsWith('safe.directory='))).toEqual([
      `safe.directory=${ws}`,
      `safe.directory=${real}`,
    ])
    expect(gitSafetyArgs(real).filter((arg) => arg.startsWith('safe.directory='))).toEqual([
      `safe.directory=${real}`,
    ])
    const gone = join(real, 'gone')
    expect(gitSafetyArgs(gone).filter((arg) => arg.startsWith('safe.directory='))).toEqual([
      `safe.directory=${gone}`,
    ])
  })
})

describe('allowedTransport', () => {
  it('allows no transport unless a clone names its one', () => {
    expect(allowedTransport(undefined)).toEqual({ GIT_ALLOW_PROTOCOL: 'none' })
    expect(allowedTransport('https')).toEqual({ GIT_ALLOW_PROTOCOL: 'https' })
  })
})

describe('findGit', () => {
  it('finds none without a PATH, or with only relative entries, and says so', () => {
    expect(() => findGit(undefined, [])).toThrow(new GitUnavailableError('git is not on PATH (no PATH)'))
    expect(() => findGit('bin:.:', [])).toThrow(new GitUnavailableError('git is not on PATH (bin:.:)'))
    try {
      findGit(undefined, [])
    } catch (err) {
      expect(err).toBeInstanceOf(GitUnavailableError)
      expect((err as Error).name).toBe('GitUnavailableError')
    }
  })

  it('passes over a directory named git and a git it may not execute', () => {
    const dir = testDir()
    mkdirSync(join(dir, 'git'))
    const other = testDir()
    writeFileSync(join(other, 'git'), '#!/bin/sh\n', { mode: 0o644 })
    expect(findGit(`${dir}:${other}:${dirname(trusted().bin)}`, [])).toMatchObject({ bin: trusted().bin })
  })

  it('answers the real path of the git it found and the PATH it was found on', () => {
    const dir = testDir()
    symlinkSync(trusted().bin, join(dir, 'git'))
    expect(findGit(`${dir}:/usr/bin`, [])).toMatchObject({ bin: trusted().bin, path: `${dir}:/usr/bin` })
  })
})

describe('runGit never runs repository-controlled code', () => {
  it('does not run a core.fsmonitor command that plain git status runs', async () => {
    const { ws, marker } = trappedRepo()
    execFileSync('git', ['-C', ws, 'status', '--porcelain'], { env: { PATH, HOME: ws }, stdio: 'ignore' })
    expect(existsSync(marker)).toBe(true)
    const { ws: again, marker: untouched } = trappedRepo()
    const run = await runGit(again, ['status', '--porcelain'], { git: trusted() })
    expect(run.exitCode).toBe(0)
    expect(existsSync(untouched)).toBe(false)
  })

  it('does not run hooks that plain git commit runs', async () => {
    const { ws, marker } = trappedRepo()
    const commit = [
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.invalid',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'x',
    ]
    execFileSync('git', ['-C', ws, '-c', 'core.fsmonitor=false', ...commit], {
      env: { PATH, HOME: ws },
      stdio: 'ignore',
    })
    expect(existsSync(marker)).toBe(true)
    const { ws: again, marker: untouched } = trappedRepo()
    expect((await runGit(again, commit, { git: trusted() })).exitCode).toBe(0)
    expect(existsSync(untouched)).toBe(false)
  })

  // Two guards, each enough alone on this git: GIT_NO_LAZY_FETCH (git ≥ 2.44, and Debian's 2.39.5
  // backport) and GIT_ALLOW_PROTOCOL (every git). Each run takes the other guard away.
  it.each(['uploadpack', 'sshCommand', 'ext'] as const)(
    "runs no partial clone's promisor remote (%s), even where git ignores GIT_NO_LAZY_FETCH",
    async (via) => {
      const marker = join(testDir(), 'fetched')
      const ws = await promisorTrap(via, marker)
      const lazy = { GIT_NO_LAZY_FETCH: '0' }
      const transports = { GIT_ALLOW_PROTOCOL: 'file:ssh:ext' }
      const head = ['rev-parse', '--verify', 'HEAD^{commit}']
      try {
        // HEAD's commit is missing, so each run fails; with ext:: it sometimes ends by a signal (the
        // helper's pipe closing under it). How git ends is not the point: whether the trap ran is.
        const run = (env: Record<string, string>) =>
          runGit(ws, head, { git: trusted(), env }).catch(() => undefined)
        // the control: a git allowed to fetch runs the trap
        await run({ ...lazy, ...transports })
        expect(existsSync(marker)).toBe(true)
        rmSync(marker)
        await run(lazy)
        expect(existsSync(marker)).toBe(false)
        await run(transports)
        expect(existsSync(marker)).toBe(false)
      } finally {
        rmSync(ws, { recursive: true, force: true })
      }
    },
  )

  it('runs none of them while the git checks verify the workspace', async () => {
    const { ws, marker } = trappedRepo()
    const verdict = await verify({ git: { worktree: true, history: true } }, { workspace: ws, env: { PATH } })
    expect(verdict.outcome).toBe('met')
    expect(existsSync(marker)).toBe(false)
  })
})

describe('runGit', () => {
  it('merges opts.env on top of the filtered environment', async () => {
    const ws = repoWithCommit()
    const index = join(testDir(), 'index')
    const run = await runGit(ws, ['rev-parse', '--git-path', 'index'], {
      git: trusted(),
      env: { GIT_INDEX_FILE: index },
    })
    expect(run.stdout).toBe(index)
  })

  it('reads nothing from stdin and reports the exit code of a failing command', async () => {
    const run = await runGit(testDir(), ['rev-parse', 'HEAD'], { git: trusted() })
    expect(run.exitCode).toBe(128)
    expect(run.stderr).toMatch(/not a git repository/)
  })

  it('stops git once the signal aborts', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(
      runGit(repoWithCommit(), ['status'], { git: trusted(), signal: controller.signal }),
    ).rejects.toThrow()
  })
})

// A git that does as scripted (its pid and its children's in files): how runGit bounds what it runs.
function scriptedGit(body: string): { git: Git; dir: string } {
  const dir = testDir()
  write(dir, 'git', `#!/bin/sh\necho $$ > ${dir}/pid\n${body}\n`, 0o755)
  return { git: { bin: join(dir, 'git'), path: PATH, home: trusted().home }, dir }
}

const pidIn = (file: string) => Number(readFileSync(file, 'utf8').trim())

const until = (done: () => boolean) => waitFor(done, { what: 'the scripted git to start' })

describe('runGit: bounds', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('gives git no stdin: a git that reads it sees its end at once', async () => {
    const { git } = scriptedGit('cat; echo read-all')
    const run = await runGit(testDir(), [], { git, timeoutMs: 3_000 })
    expect(run).toEqual({
      exitCode: 0,
      stdout: 'read-all',
      stdoutBytes: Buffer.from('read-all\n'),
      stderr: '',
    })
  })

  it('gives git /dev/null for stdin when there is no input', async () => {
    const { git } = scriptedGit('readlink /proc/self/fd/0')
    expect((await runGit(testDir(), [], { git, timeoutMs: 3_000 })).stdout).toBe('/dev/null')
  })

  it('gives git exactly `input` on its stdin, bytes as they are', async () => {
    const { git } = scriptedGit('od -An -tx1 | tr -d " \\n"')
    const run = await runGit(testDir(), [], {
      git,
      timeoutMs: 3_000,
      input: Buffer.from([0x61, 0xff, 0, 0x0a]),
    })
    expect(run.stdout).toBe('61ff000a')
  })

  it('answers for a git that exits without reading its input (no EPIPE thrown)', async () => {
    const { git } = scriptedGit('exit 3')
    const run = await runGit(testDir(), [], { git, timeoutMs: 3_000, input: Buffer.alloc(1 << 20) })
    expect(run.exitCode).toBe(3)
  })

  // A git that ignores SIGTERM, and a child of it that holds its output: long enough to outlive the bound
  // many times, short enough that a run that fails to stop them still ends.
  it('stops git and everything it started when the time bound passes', async () => {
    const { git, dir } = scriptedGit('trap \'\' TERM\nsleep 3 &\necho $! > "$(dirname "$0")/child"\nwait')
    const kill = vi.spyOn(process, 'kill')
    const started = Date.now()
    const run = runGit(testDir(), ['fetch', 'origin'], { git, timeoutMs: 300 })
    await expect(run).rejects.toThrow(new GitAbortedError('git fetch origin did not finish'))
    // once: after the group was killed, its id may be reused
    expect(kill).toHaveBeenCalledTimes(1)
    expect(Date.now() - started).toBeLessThan(2_500)
    expect(await diesWithin(pidIn(join(dir, 'child')))).toBe(true)
    expect(await diesWithin(pidIn(join(dir, 'pid')))).toBe(true)
  })

  it('stops git when the signal aborts while it runs, and leaves no listener on the signal', async () => {
    const { git, dir } = scriptedGit('sleep 3')
    const controller = new AbortController()
    const run = runGit(testDir(), ['status'], { git, signal: controller.signal })
    await until(() => existsSync(join(dir, 'pid')))
    const kill = vi.spyOn(process, 'kill')
    controller.abort()
    await expect(run).rejects.toThrow(GitAbortedError)
    expect(kill).toHaveBeenCalledTimes(1)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    const done = new AbortController()
    await runGit(testDir(), ['version'], { git: trusted(), signal: done.signal })
    expect(getEventListeners(done.signal, 'abort')).toHaveLength(0)
  })

  it('is GitUnavailableError when git cannot be started, and signals nothing', async () => {
    const kill = vi.spyOn(process, 'kill')
    const missing = { bin: join(testDir(), 'no-git'), path: PATH, home: trusted().home }
    const run = runGit(testDir(), ['status'], { git: missing })
    await expect(run).rejects.toThrow(GitUnavailableError)
    await expect(run).rejects.toThrow(/^git could not start: spawn .*no-git ENOENT$/)
    expect(kill).not.toHaveBeenCalled()
  })

  // Once git has exited, its process group id may be reused: a kill then could hit someone else's.
  it('signals no process group once git has exited', async () => {
    const kill = vi.spyOn(process, 'kill')
    expect((await runGit(testDir(), ['version'], { git: trusted(), timeoutMs: 10_000 })).exitCode).toBe(0)
    expect(kill).not.toHaveBeenCalled()
  })

  it('drops one trailing newline of stdout and of stderr, nothing else', async () => {
    const { git } = scriptedGit("printf 'a\\nb\\n'; printf 'warn\\nmore\\n' >&2")
    expect(await runGit(testDir(), [], { git })).toEqual({
      exitCode: 0,
      stdout: 'a\nb',
      // the bytes are as git wrote them
      stdoutBytes: Buffer.from('a\nb\n'),
      stderr: 'warn\nmore',
    })
  })

  // Outcomes as lengths and messages: a failing assertion that printed 64 MiB would take the runner down.
  const sizeOf = (run: Promise<{ stdout: string }>) =>
    run.then(
      (done) => done.stdout.length,
      (err: Error) => err.message,
    )

  it('reads output up to the bound, 64 MiB', async () => {
    const { git } = scriptedGit(`yes | head -c ${64 * 1024 * 1024}`)
    expect(await sizeOf(runGit(testDir(), ['log'], { git }))).toBe(64 * 1024 * 1024 - 1)
  })

  // git ignoring SIGPIPE (its pipe closed by the reader) and living on: past the bound it is stopped.
  it('stops reading, and stops git, past the output bound', async () => {
    const { git, dir } = scriptedGit(`trap '' PIPE\nyes | head -c ${64 * 1024 * 1024 + 1}\nsleep 3`)
    expect(await sizeOf(runGit(testDir(), ['log'], { git }))).toBe('git wrote more output than a check reads')
    expect(await diesWithin(pidIn(join(dir, 'pid')), 1_500)).toBe(true)
  })

  it('names its errors', () => {
    expect(new GitAbortedError('x').name).toBe('GitAbortedError')
    expect(new GitUnavailableError('x').name).toBe('GitUnavailableError')
  })
})

describe('the scratch HOME of git', () => {
  it('is one empty directory per uid, mode 0700, reused', () => {
    const parent = testDir()
    const home = scratchHomeIn(parent)
    expect(statSync(home).mode & 0o777).toBe(0o700)
    expect(readdirSync(home)).toEqual([])
    expect(scratchHomeIn(parent)).toBe(home)
  })

  it('is a private directory when the shared one holds anything (a planted .gitconfig)', () => {
    const parent = testDir()
    const shared = scratchHomeIn(parent)
    write(shared, '.gitconfig', '[core]\n\tpager = touch /tmp/pwned\n')
    const home = scratchHomeIn(parent)
    expect(home).not.toBe(shared)
    expect(readdirSync(home)).toEqual([])
  })

  it('is a private directory when the shared one is open to others', () => {
    const parent = testDir()
    const shared = scratchHomeIn(parent)
    chmodSync(shared, 0o777)
    expect(scratchHomeIn(parent)).not.toBe(shared)
  })

  it('is named after the uid, inside the directory given', () => {
    const parent = testDir()
    expect(scratchHomeIn(parent)).toBe(join(parent, `preflight-git-home-${process.getuid?.()}`))
  })

  it('makes a private directory inside the directory given, empty and 0700', () => {
    const parent = testDir()
    write(parent, `preflight-git-home-${process.getuid?.()}/.gitconfig`)
    const home = scratchHomeIn(parent)
    expect(dirname(home)).toBe(parent)
    expect(basename(home)).toMatch(/^preflight-git-home-.{6}$/)
    expect(statSync(home).mode & 0o777).toBe(0o700)
  })

  it('is a private directory when the shared name is a link to an empty directory', () => {
    const parent = testDir()
    const target = join(parent, 'elsewhere')
    mkdirSync(target, { mode: 0o700 })
    symlinkSync(target, join(parent, `preflight-git-home-${process.getuid?.()}`))
    const home = scratchHomeIn(parent)
    expect(home).not.toBe(join(parent, `preflight-git-home-${process.getuid?.()}`))
    expect(home).not.toBe(target)
  })

  it('is a private directory when the shared name is an empty file of mode 0600', () => {
    const parent = testDir()
    const shared = write(parent, `preflight-git-home-${process.getuid?.()}`, '', 0o600)
    const home = scratchHomeIn(parent)
    expect(home).not.toBe(shared)
    expect(statSync(home).isDirectory()).toBe(true)
  })

  it.runIf(process.getuid?.() === 0)(
    'is a private directory when the shared one belongs to another uid',
    () => {
      const parent = testDir()
      const shared = scratchHomeIn(parent)
      chownSync(shared, 4242, 4242)
      expect(scratchHomeIn(parent)).not.toBe(shared)
    },
  )

  it('throws, rather than take a directory it could not look at, where the file system fails', async (ctx) => {
    const broken = await failingMount('EIO')
    if (!broken) return ctx.skip()
    expect(() => scratchHomeIn(broken)).toThrow(/EIO/)
  })

  it('comes with the git findGit finds: the scratch HOME of the directory given, of mode 0700', () => {
    const parent = testDir()
    const { home } = findGit(PATH, [], parent)
    expect(home).toBe(scratchHomeIn(parent))
    expect(statSync(home).mode & 0o777).toBe(0o700)
  })

  it('is in the temporary directory unless another is given', () => {
    expect(dirname(findGit(PATH, []).home)).toBe(tmpdir())
  })

  // The removal runs at exit: a child process shows it.
  it('removes a private directory when the process exits', () => {
    const parent = testDir()
    write(parent, `preflight-git-home-${process.getuid?.()}/.gitconfig`)
    const module = new URL('../../../worker/run/git-home.ts', import.meta.url).pathname
    const script = `import { scratchHomeIn } from ${JSON.stringify(module)}
process.stdout.write(scratchHomeIn(${JSON.stringify(parent)}))`
    const home = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    })
    expect(dirname(home)).toBe(parent)
    expect(existsSync(home)).toBe(false)
  })
})
