import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkGit } from '../../../worker/checks/git.js'
import { findGit } from '../../../worker/checks/git-env.js'
import { verify } from '../../../worker/checks/index.js'
import { context, git, link, repoWithCommit, tempDir, write } from './helpers.js'

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
    expect(await worktree(tempDir())).toEqual({
      status: 'unmet',
      reason: 'not-a-worktree',
      observed: { toplevel: null, head: null, shallow: false },
    })
  })

  it('is unmet no-history in a repository without commits', async () => {
    const ws = tempDir()
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
    const plain = tempDir()
    const mustNot = { git: { worktree: false, history: false } }
    expect((await verify(mustNot, { workspace: plain, env: { PATH } })).outcome).toBe('met')
    const inRepo = await verify(mustNot, { workspace: repo, env: { PATH } })
    expect(inRepo.results.map((r) => r.reason)).toEqual(['is-a-worktree', 'has-history'])
  })

  it('reports a shallow clone as shallow', async () => {
    const origin = repoWithCommit()
    const ws = join(tempDir(), 'clone')
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${origin}`, ws], { env: { PATH, HOME: ws } })
    expect((await worktree(ws)).observed).toMatchObject({ shallow: true })
  })

  it('answers for a bare repository without a worktree', async () => {
    const ws = tempDir()
    git(ws, 'init', '-q', '--bare')
    expect(await worktree(ws)).toMatchObject({ status: 'unmet', observed: { toplevel: null, head: null } })
  })

  it('is error git-unavailable when git is not on the agent PATH', async () => {
    const finding = await worktree(repoWithCommit(), { PATH: tempDir() })
    expect(finding).toMatchObject({ status: 'error', reason: 'git-unavailable' })
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
    const ws = tempDir()
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
    const ws = tempDir()
    process.env.GIT_DIR = join(other, '.git')
    process.env.GIT_WORK_TREE = ws
    expect((await worktree(ws)).status).toBe('unmet')
  })

  it("never runs a git found through a relative PATH entry (it would be the workspace's own)", async () => {
    const ws = tempDir()
    write(ws, 'bin/git', `#!/bin/sh\ntouch ${join(ws, 'RAN')}\necho true\n`, 0o755)
    expect(await worktree(ws, { PATH: `bin:${PATH}` })).toMatchObject({ status: 'unmet' })
    expect(await worktree(ws, { PATH: 'bin' })).toMatchObject({ status: 'error', reason: 'git-unavailable' })
    expect(await worktree(ws, { PATH: join(ws, 'bin') })).toMatchObject({
      status: 'error',
      reason: 'git-unavailable',
    })
    expect(existsSync(join(ws, 'RAN'))).toBe(false)
  })

  it("never runs the workspace's git through an absolute PATH entry that leads into it", async () => {
    const ws = tempDir()
    write(ws, 'bin/git', `#!/bin/sh\ntouch ${join(ws, 'RAN')}\necho true\n`, 0o755)
    const outside = tempDir()
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
          env: { PATH, HOME: tempDir() },
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
    const ws = tempDir()
    const planted = tempDir()
    const ran = join(planted, 'RAN')
    write(
      planted,
      'git',
      `#!/bin/sh\ntouch ${ran}\necho true\necho false\necho ${ws}\necho 0000000000000000000000000000000000000000\n`,
      0o755,
    )
    const verdict = await verify(
      { git: { worktree: true, history: true } },
      { workspace: ws, env: { PATH: `${planted}:${PATH}` }, git: findGit(PATH) },
    )
    expect(verdict.results.map((r) => r.status)).toEqual(['unmet', 'unmet'])
    expect(existsSync(ran)).toBe(false)
  })
})
