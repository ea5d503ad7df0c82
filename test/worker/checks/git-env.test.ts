import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findGit, gitEnvironment, gitSafetyArgs, runGit } from '../../../worker/checks/git-env.js'
import { scratchHomeIn } from '../../../worker/checks/git-home.js'
import { verify } from '../../../worker/checks/index.js'
import { promisorTrap } from '../git-fixtures.js'
import { git, repoWithCommit, tempDir, write } from './helpers.js'

const PATH = process.env.PATH ?? ''
const GIT = findGit(PATH)

// A repository whose config and hooks would run a command that leaves a marker file behind.
function trappedRepo(): { ws: string; marker: string } {
  const ws = repoWithCommit()
  const marker = join(tempDir(), 'ran')
  const trap = write(tempDir(), 'trap.sh', `#!/bin/sh\ntouch ${marker}\nexit 0\n`, 0o755)
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
    const planted = tempDir()
    const hideAll = write(planted, 'hide-all', '*\n')
    write(planted, '.gitconfig', `[user]\n\tname = planted\n[core]\n\texcludesFile = ${hideAll}\n`)
    write(planted, '.config/git/ignore', '*\n')
    const run = (...args: string[]) => runGit(ws, args, { git: GIT, env: { HOME: planted } })
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
})

describe('runGit never runs repository-controlled code', () => {
  it('does not run a core.fsmonitor command that plain git status runs', async () => {
    const { ws, marker } = trappedRepo()
    execFileSync('git', ['-C', ws, 'status', '--porcelain'], { env: { PATH, HOME: ws }, stdio: 'ignore' })
    expect(existsSync(marker)).toBe(true)
    const { ws: again, marker: untouched } = trappedRepo()
    const run = await runGit(again, ['status', '--porcelain'], { git: GIT })
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
    expect((await runGit(again, commit, { git: GIT })).exitCode).toBe(0)
    expect(existsSync(untouched)).toBe(false)
  })

  // Two guards, each enough alone on this git: GIT_NO_LAZY_FETCH (git ≥ 2.44, and Debian's 2.39.5
  // backport) and GIT_ALLOW_PROTOCOL (every git). Each run takes the other guard away.
  it.each(['uploadpack', 'sshCommand', 'ext'] as const)(
    "runs no partial clone's promisor remote (%s), even where git ignores GIT_NO_LAZY_FETCH",
    async (via) => {
      const marker = join(tempDir(), 'fetched')
      const ws = await promisorTrap(via, marker)
      const lazy = { GIT_NO_LAZY_FETCH: '0' }
      const transports = { GIT_ALLOW_PROTOCOL: 'file:ssh:ext' }
      const head = ['rev-parse', '--verify', 'HEAD^{commit}']
      try {
        // the control: a git allowed to fetch runs the trap
        await runGit(ws, head, { git: GIT, env: { ...lazy, ...transports } })
        expect(existsSync(marker)).toBe(true)
        rmSync(marker)
        await runGit(ws, head, { git: GIT, env: lazy })
        expect(existsSync(marker)).toBe(false)
        await runGit(ws, head, { git: GIT, env: transports })
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
    const index = join(tempDir(), 'index')
    const run = await runGit(ws, ['rev-parse', '--git-path', 'index'], {
      git: GIT,
      env: { GIT_INDEX_FILE: index },
    })
    expect(run.stdout).toBe(index)
  })

  it('reads nothing from stdin and reports the exit code of a failing command', async () => {
    const run = await runGit(tempDir(), ['rev-parse', 'HEAD'], { git: GIT })
    expect(run.exitCode).toBe(128)
    expect(run.stderr).toMatch(/not a git repository/)
  })

  it('stops git once the signal aborts', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(
      runGit(repoWithCommit(), ['status'], { git: GIT, signal: controller.signal }),
    ).rejects.toThrow()
  })
})

describe('the scratch HOME of git', () => {
  it('is one empty directory per uid, mode 0700, reused', () => {
    const parent = tempDir()
    const home = scratchHomeIn(parent)
    expect(statSync(home).mode & 0o777).toBe(0o700)
    expect(readdirSync(home)).toEqual([])
    expect(scratchHomeIn(parent)).toBe(home)
  })

  it('is a private directory when the shared one holds anything (a planted .gitconfig)', () => {
    const parent = tempDir()
    const shared = scratchHomeIn(parent)
    write(shared, '.gitconfig', '[core]\n\tpager = touch /tmp/pwned\n')
    const home = scratchHomeIn(parent)
    expect(home).not.toBe(shared)
    expect(readdirSync(home)).toEqual([])
  })

  it('is a private directory when the shared one is open to others', () => {
    const parent = tempDir()
    const shared = scratchHomeIn(parent)
    chmodSync(shared, 0o777)
    expect(scratchHomeIn(parent)).not.toBe(shared)
  })
})
