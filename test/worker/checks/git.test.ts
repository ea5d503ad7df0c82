import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ContextRequires } from '../../../src/contract/index.js'
import { checkGit } from '../../../worker/checks/git.js'
import { verify } from '../../../worker/checks/index.js'
import { findGit, type Git } from '../../../worker/run/git-env.js'
import { bindGit } from '../../../worker/run/job-git.js'
import { context, link, repoWithCommit, sharedDir, testDir, write } from '../../support/checks.js'
import { diesWithin, git } from '../../support/git-fixtures.js'

const PATH = process.env.PATH ?? ''

function worktree(ws: string, env: Record<string, string> = { PATH }) {
  return checkGit('worktree', context(ws, { git: { worktree: true } }, { env }))
}

describe('git: facts', () => {
  it('meets worktree and history in a repository with a commit, observing toplevel, head and shallow', async () => {
    const ws = repoWithCommit()
    const head = git(ws, 'rev-parse', 'HEAD')
    const verdict = await verify({ git: { worktree: true, history: true } }, { workspace: ws, env: { PATH } })
    expect(verdict.results.map((r) => [r.requirement, r.status])).toEqual([
      ['worktree', 'met'],
      ['history', 'met'],
    ])
    expect(verdict.results[0]?.observed).toEqual({ toplevel: ws, head, shallow: false })
  })

  it('answers unmet, not error, for a workspace that is not a repository', async () => {
    expect(await worktree(testDir())).toEqual({
      status: 'unmet',
      reason: 'not-a-worktree',
      observed: { toplevel: null, head: null, shallow: false },
    })
  })

  it('is unmet no-history in a repository without commits', async () => {
    const ws = testDir()
    git(ws, 'init', '-q')
    const finding = await checkGit('history', context(ws, { git: { history: true } }))
    expect(finding).toMatchObject({
      status: 'unmet',
      reason: 'no-history',
      observed: { toplevel: ws, head: null },
    })
  })

  it('reads false as "must not hold"', async () => {
    const repo = repoWithCommit()
    const plain = testDir()
    const mustNot = { git: { worktree: false, history: false } }
    expect((await verify(mustNot, { workspace: plain, env: { PATH } })).outcome).toBe('met')
    const inRepo = await verify(mustNot, { workspace: repo, env: { PATH } })
    expect(inRepo.results.map((r) => r.reason)).toEqual(['is-a-worktree', 'has-history'])
  })

  it('reports a shallow clone as shallow', async () => {
    const origin = repoWithCommit()
    const ws = join(testDir(), 'clone')
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${origin}`, ws], { env: { PATH, HOME: ws } })
    expect((await worktree(ws)).observed).toMatchObject({ shallow: true })
  })

  it('answers for a bare repository without a worktree', async () => {
    const ws = testDir()
    git(ws, 'init', '-q', '--bare')
    expect(await worktree(ws)).toMatchObject({ status: 'unmet', observed: { toplevel: null, head: null } })
  })

  it('is error git-unavailable when git is not on the agent PATH', async () => {
    const finding = await worktree(repoWithCommit(), { PATH: testDir() })
    expect(finding).toMatchObject({
      status: 'error',
      reason: 'git-unavailable',
      observed: { message: expect.stringContaining('git is not on PATH') },
    })
  })

  it('is error unknown-kind for a fact it does not know, naming it', async () => {
    expect(await checkGit('clean', context(testDir(), { git: { worktree: true } }))).toEqual({
      status: 'error',
      reason: 'unknown-kind',
      observed: { fact: 'clean' },
    })
  })

  it('is error invalid-requirement for a fact declared neither true nor false', async () => {
    const requires = { git: { history: 'yes' } } as unknown as ContextRequires
    expect(await checkGit('worktree', context(repoWithCommit(), { git: {} }))).toMatchObject({
      status: 'error',
      reason: 'invalid-requirement',
      observed: { problem: 'git.worktree must be true or false' },
    })
    expect(await checkGit('history', context(repoWithCommit(), requires))).toMatchObject({
      status: 'error',
      reason: 'invalid-requirement',
    })
    expect(await checkGit('history', context(repoWithCommit(), {}))).toMatchObject({
      status: 'error',
      reason: 'invalid-requirement',
    })
  })

  // git runs as the agent (--agent-uid): it may read only what the agent may. Needs root to switch uid.
  it.runIf(process.getuid?.() === 0)(
    'runs git as the agent: a repository closed to it answers nothing',
    async () => {
      const agent = { uid: 4242, gid: 4242 }
      const open = repoWithCommit(sharedDir())
      const requires = { git: { worktree: true, history: true } }
      expect((await verify(requires, { workspace: open, env: { PATH }, agent })).outcome).toBe('met')
      const closed = repoWithCommit()
      expect((await verify(requires, { workspace: closed, env: { PATH } })).outcome).toBe('met')
      const asAgent = await verify(requires, { workspace: closed, env: { PATH }, agent })
      expect(asAgent.results.map((r) => [r.status, r.reason])).toEqual([
        ['error', 'check-failed'],
        ['error', 'check-failed'],
      ])
    },
  )
})

// A git that answers as scripted (and logs each run's arguments): how the check reads every kind of answer,
// including ones no repository at hand produces.
function scriptedGit(body: string): { git: Git; runs: () => string[] } {
  const dir = testDir()
  const log = join(dir, 'runs')
  write(dir, 'git', `#!/bin/sh\necho "$*" >> ${log}\n${body}\n`, 0o755)
  return {
    git: { bin: join(dir, 'git'), path: PATH, home: testDir() },
    runs: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
  }
}

async function factsWith(body: string) {
  const { git, runs } = scriptedGit(body)
  const verdict = await verify(
    { git: { worktree: true, history: true } },
    { workspace: testDir(), env: { PATH }, git: bindGit(git).run },
  )
  return { results: verdict.results.map(({ durationMs: _, kind: __, ...r }) => r), runs: runs() }
}

const NOT_A_REPO = { toplevel: null, head: null, shallow: false }

describe("git: the check's own time bound", () => {
  it('stops a git that outlives the per-check timeout (its signal and time bound reach the git run)', async () => {
    const dir = testDir()
    const pidFile = join(dir, 'pid')
    const { git } = scriptedGit(`echo $$ > ${pidFile}; exec sleep 30`)
    const verdict = await verify(
      { git: { worktree: true } },
      { workspace: testDir(), env: { PATH }, git: bindGit(git).run, timeoutMs: 300 },
    )
    expect(verdict.results[0]).toMatchObject({ status: 'error', reason: 'timeout' })
    const pid = Number(readFileSync(pidFile, 'utf8'))
    expect(await diesWithin(pid, 3_000)).toBe(true)
  })
})

describe('git: reading what git answered', () => {
  it('reads "not a git repository" (exit 128) as an answer: not a worktree, no history', async () => {
    const { results } = await factsWith(
      'echo "fatal: not a git repository (or any of the parent directories): .git" >&2; exit 128',
    )
    expect(results).toEqual([
      { requirement: 'worktree', status: 'unmet', reason: 'not-a-worktree', observed: NOT_A_REPO },
      { requirement: 'history', status: 'unmet', reason: 'no-history', observed: NOT_A_REPO },
    ])
  })

  it.each([
    [
      'exit 128 with another message',
      'echo "fatal: unable to access .git/config: Permission denied" >&2; exit 128',
      'git rev-parse exited 128: fatal: unable to access .git/config: Permission denied',
    ],
    ['exit 2', 'echo "usage: git" >&2; exit 2', 'git rev-parse exited 2: usage: git'],
    ['exit 129 printing facts', 'printf "true\\nfalse\\n/ws\\n"; exit 129', 'git rev-parse exited 129: '],
  ])('reads a git that fails with %s as no answer: error, never met', async (_name, body, message) => {
    const { results } = await factsWith(body)
    for (const result of results) {
      expect(result).toMatchObject({ status: 'error', reason: 'check-failed', observed: { message } })
    }
  })

  it('reads both facts, shallow, toplevel and head from one run', async () => {
    const { results, runs } = await factsWith('printf "true\\ntrue\\n/ws\\nabc123\\n"')
    const observed = { toplevel: '/ws', head: 'abc123', shallow: true }
    expect(results).toEqual([
      { requirement: 'worktree', status: 'met', observed },
      { requirement: 'history', status: 'met', observed },
    ])
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatch(
      / rev-parse --is-inside-work-tree --is-shallow-repository --show-toplevel --verify --quiet HEAD\^\{commit\}$/,
    )
  })

  it.each([
    ['exit 1 (no commit at HEAD)', 'printf "true\\nfalse\\n/ws\\n"; exit 1'],
    ['exit 1 even with a line where the head would be', 'printf "true\\nfalse\\n/ws\\nabc123\\n"; exit 1'],
    ['exit 0 without a head line', 'printf "true\\nfalse\\n/ws\\n"'],
  ])('reads no head from %s', async (_name, body) => {
    const { results } = await factsWith(body)
    const observed = { toplevel: '/ws', head: null, shallow: false }
    expect(results).toEqual([
      { requirement: 'worktree', status: 'met', observed },
      { requirement: 'history', status: 'unmet', reason: 'no-history', observed },
    ])
  })

  it('reads a worktree only from "true", and takes no message on stderr of a successful run for an answer', async () => {
    const warn = 'echo "warning: not a git repository; must be run in a work tree" >&2'
    const { results } = await factsWith(`${warn}; printf "false\\nfalse\\n/ws\\nabc123\\n"`)
    const observed = { toplevel: '/ws', head: 'abc123', shallow: false }
    expect(results).toEqual([
      { requirement: 'worktree', status: 'unmet', reason: 'not-a-worktree', observed },
      { requirement: 'history', status: 'met', observed },
    ])
  })

  // --show-toplevel makes git give up outside a work tree (a bare repository, the inside of .git)
  const bare = (second: string) =>
    `case "$*" in *--show-toplevel*) echo "fatal: this operation must be run in a work tree" >&2; exit 128;; esac; ${second}`

  it('asks again without --show-toplevel where git needs a work tree for it', async () => {
    const { results, runs } = await factsWith(bare('printf "false\\ntrue\\nabc123\\n"'))
    const observed = { toplevel: null, head: 'abc123', shallow: true }
    expect(results).toEqual([
      { requirement: 'worktree', status: 'unmet', reason: 'not-a-worktree', observed },
      { requirement: 'history', status: 'met', observed },
    ])
    expect(runs).toHaveLength(2)
    expect(runs[1]).toMatch(
      / rev-parse --is-inside-work-tree --is-shallow-repository --verify --quiet HEAD\^\{commit\}$/,
    )
  })

  it('reads the second answer as the first: "true" is a worktree, exit 1 no head', async () => {
    const { results } = await factsWith(bare('printf "true\\nfalse\\nabc123\\n"; exit 1'))
    const observed = { toplevel: null, head: null, shallow: false }
    expect(results).toEqual([
      { requirement: 'worktree', status: 'met', observed },
      { requirement: 'history', status: 'unmet', reason: 'no-history', observed },
    ])
  })

  it('reads a failing second run as no answer', async () => {
    const { results } = await factsWith(bare('echo "fatal: bad object" >&2; exit 128'))
    expect(results.map((r) => [r.status, r.reason])).toEqual([
      ['error', 'check-failed'],
      ['error', 'check-failed'],
    ])
  })
})

describe('git: the filtered environment', () => {
  const saved = { ...process.env }
  afterEach(() => {
    for (const name of ['GIT_DIR', 'GIT_WORK_TREE']) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  })

  it('keeps GIT_DIR and GIT_WORK_TREE of the agent environment from pointing git at another repository', async () => {
    const other = repoWithCommit()
    const ws = testDir()
    const redirect = { GIT_DIR: join(other, '.git'), GIT_WORK_TREE: ws }
    // raw git with those variables inherited gives the wrong answer for the workspace
    const raw = execFileSync('git', ['-C', ws, 'rev-parse', '--is-inside-work-tree'], {
      env: { PATH, ...redirect },
    })
    expect(String(raw).trim()).toBe('true')
    const verdict = await verify(
      { git: { worktree: true, history: true } },
      { workspace: ws, env: { PATH, ...redirect } },
    )
    expect(verdict.results.map((r) => r.status)).toEqual(['unmet', 'unmet'])
  })

  it("keeps the worker's own GIT_DIR from reaching git", async () => {
    const other = repoWithCommit()
    const ws = testDir()
    process.env.GIT_DIR = join(other, '.git')
    process.env.GIT_WORK_TREE = ws
    expect((await worktree(ws)).status).toBe('unmet')
  })

  it("never runs a git found through a relative PATH entry (it would be the workspace's own)", async () => {
    const ws = testDir()
    write(ws, 'bin/git', `#!/bin/sh\ntouch ${join(ws, 'RAN')}\necho true\n`, 0o755)
    expect(await worktree(ws, { PATH: `bin:${PATH}` })).toMatchObject({ status: 'unmet' })
    expect(await worktree(ws, { PATH: 'bin' })).toMatchObject({ status: 'error', reason: 'git-unavailable' })
    expect(await worktree(ws, { PATH: join(ws, 'bin') })).toMatchObject({
      status: 'error',
      reason: 'git-unavailable',
    })
    expect(existsSync(join(ws, 'RAN'))).toBe(false)
  })

  // The relative entry is read from this process's cwd, not the workspace: a git found there, outside the
  // workspace, passes the containment check, so only the rule "absolute entries only" keeps it from running.
  it('never runs a git found through a relative PATH entry that leads outside the workspace', async () => {
    const outside = testDir()
    const ran = join(outside, 'RAN')
    write(outside, 'bin/git', `#!/bin/sh\ntouch ${ran}\necho true\necho false\necho /\necho abc\n`, 0o755)
    const entry = relative(process.cwd(), join(outside, 'bin'))
    expect(entry.startsWith('..')).toBe(true)
    expect(await worktree(testDir(), { PATH: entry })).toMatchObject({
      status: 'error',
      reason: 'git-unavailable',
    })
    expect(await worktree(testDir(), { PATH: `${entry}:${PATH}` })).toMatchObject({ status: 'unmet' })
    expect(existsSync(ran)).toBe(false)
  })

  // git compares real paths: the workspace's real path is what must not hold the git that runs.
  it("never runs the workspace's own git when the workspace is given through a link", async () => {
    const real = testDir()
    const ran = join(testDir(), 'RAN')
    write(real, 'bin/git', `#!/bin/sh\ntouch ${ran}\necho true\n`, 0o755)
    const ws = join(testDir(), 'workspace')
    symlinkSync(real, ws)
    for (const entry of [join(real, 'bin'), join(ws, 'bin')]) {
      expect(await worktree(ws, { PATH: `${entry}:${PATH}` })).toMatchObject({ status: 'unmet' })
    }
    expect(existsSync(ran)).toBe(false)
  })

  it("never runs the workspace's git through an absolute PATH entry that leads into it", async () => {
    const ws = testDir()
    write(ws, 'bin/git', `#!/bin/sh\ntouch ${join(ws, 'RAN')}\necho true\n`, 0o755)
    const outside = testDir()
    link(outside, 'via-link', join(ws, 'bin'))
    link(outside, 'git-link/git', join(ws, 'bin/git'))
    for (const entry of [
      `${outside}/../${basename(ws)}/bin`, // through ..
      join(outside, 'via-link'), // a directory link into the workspace
      join(outside, 'git-link'), // a git that is a link into the workspace
    ]) {
      expect(await worktree(ws, { PATH: `${entry}:${PATH}` })).toMatchObject({ status: 'unmet' })
    }
    expect(existsSync(join(ws, 'RAN'))).toBe(false)
  })
})

describe('git: repository owned by another uid', () => {
  it.skipIf(process.getuid?.() !== 0)(
    'still answers met where git alone would refuse the repository',
    async () => {
      const ws = repoWithCommit()
      for (const entry of walk(ws)) chownSync(entry, 4242, 4242)
      // git refuses a repository owned by someone else unless it is a safe.directory
      expect(() =>
        execFileSync('git', ['-C', ws, 'rev-parse', 'HEAD'], {
          env: { PATH, HOME: testDir() },
          stdio: 'pipe',
        }),
      ).toThrow(/dubious ownership/)
      const verdict = await verify(
        { git: { worktree: true, history: true } },
        { workspace: ws, env: { PATH } },
      )
      expect(verdict.results.map((r) => r.status)).toEqual(['met', 'met'])
    },
  )
})

function walk(dir: string): string[] {
  const out = [dir]
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...walk(path))
    else out.push(path)
  }
  return out
}

describe("git: the worker's own, found once", () => {
  // An agent that can write a directory on its own PATH plants a git there that answers anything.
  it("never runs a git planted on the agent's PATH when the worker gave its own", async () => {
    const ws = testDir()
    const planted = testDir()
    const ran = join(planted, 'RAN')
    write(
      planted,
      'git',
      `#!/bin/sh\ntouch ${ran}\necho true\necho false\necho ${ws}\necho 0000000000000000000000000000000000000000\n`,
      0o755,
    )
    const verdict = await verify(
      { git: { worktree: true, history: true } },
      { workspace: ws, env: { PATH: `${planted}:${PATH}` }, git: bindGit(findGit(PATH, [])).run },
    )
    expect(verdict.results.map((r) => r.status)).toEqual(['unmet', 'unmet'])
    expect(existsSync(ran)).toBe(false)
  })
})
