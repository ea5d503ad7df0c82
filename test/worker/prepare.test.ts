import { existsSync, statSync } from 'node:fs'
import { appendFile, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { basename, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { allowedPath, prepareWorkspace, refuseRepo } from '../../worker/prepare.js'
import { bindGit } from '../../worker/run/job-git.js'
import { git, makeRepo, removeAll, tempDir, writeFiles } from '../support/git-fixtures.js'
import { GIT, JOB_GIT } from '../support/worker-git.js'

const dirs: string[] = []
afterEach(() => removeAll(dirs))

async function track<T extends string>(dir: Promise<T>): Promise<T> {
  const d = await dir
  dirs.push(d)
  return d
}

async function clone(repo: string, ref?: string) {
  const workdir = await track(tempDir('preflight-workdir-'))
  return prepareWorkspace({
    workspace: { repo, ...(ref ? { ref } : {}) },
    workdir,
    name: 'job-1',
    roots: [],
    git: JOB_GIT,
    // the fixtures are local repositories; the default refusal has its own tests below
    allowLocalRepos: true,
  })
}

describe('prepareWorkspace: clone', () => {
  it('clones a local repository into a fresh directory', async () => {
    const repo = await track(makeRepo({ 'a.txt': 'main\n' }))
    const prepared = await clone(repo)
    expect(prepared.ok).toBe(true)
    if (prepared.ok) expect(await readFile(join(prepared.dir, 'a.txt'), 'utf8')).toBe('main\n')
  })

  it("copies none of git's templates (sample hooks, description), but has the info/ and hooks/ tools write to", async () => {
    const repo = await track(makeRepo({ 'a.txt': 'main\n' }))
    const prepared = await clone(repo)
    if (!prepared.ok) throw new Error(prepared.detail)
    const gitDir = join(prepared.dir, '.git')
    expect((await readdir(gitDir)).sort()).toEqual(
      ['HEAD', 'config', 'hooks', 'index', 'info', 'logs', 'objects', 'packed-refs', 'refs'].sort(),
    )
    expect(await readdir(join(gitDir, 'hooks'))).toEqual([])
    // a setup script's usual `echo .venv >> .git/info/exclude` works, and git reads it
    await appendFile(join(gitDir, 'info', 'exclude'), 'made.log\n')
    await writeFile(join(prepared.dir, 'made.log'), 'x')
    expect(git(prepared.dir, 'status', '--porcelain')).toBe('')
  })

  it('checks out a branch, a tag or a commit named by workspace.ref', async () => {
    const repo = await track(makeRepo({ 'a.txt': 'v1\n' }))
    const first = git(repo, 'rev-parse', 'HEAD')
    git(repo, 'tag', 'v1')
    git(repo, 'checkout', '-q', '-b', 'feature')
    await writeFiles(repo, { 'a.txt': 'feature\n' })
    git(repo, 'commit', '-q', '-am', 'feature')
    git(repo, 'checkout', '-q', 'main')
    await writeFiles(repo, { 'a.txt': 'main\n' })
    git(repo, 'commit', '-q', '-am', 'main')
    for (const [ref, expected] of [
      ['feature', 'feature\n'],
      ['v1', 'v1\n'],
      [first, 'v1\n'],
    ] as const) {
      const prepared = await clone(repo, ref)
      if (!prepared.ok) throw new Error(`${ref}: ${prepared.detail}`)
      expect(await readFile(join(prepared.dir, 'a.txt'), 'utf8')).toBe(expected)
    }
  })

  it('clones a file:// URL', async () => {
    const repo = await track(makeRepo({ 'a.txt': 'x\n' }))
    const prepared = await clone(`file://${repo}`)
    expect(prepared.ok).toBe(true)
  })

  it('takes a ref that looks like an option as a ref (not found), never as an option', async () => {
    const repo = await track(makeRepo())
    const marker = join(await track(tempDir()), 'ran')
    for (const ref of [`--output=${marker}`, '-h']) {
      const prepared = await clone(repo, ref)
      expect(prepared.ok ? 'ok' : prepared.reason).toBe('ref-not-found')
    }
    expect(existsSync(marker)).toBe(false)
  })

  it('fails with ref-not-found for a ref the repository does not have', async () => {
    const repo = await track(makeRepo())
    const prepared = await clone(repo, 'no-such-branch')
    expect(prepared.ok ? 'ok' : prepared.reason).toBe('ref-not-found')
  })

  it("fails with clone-failed when the worker's git is gone", async () => {
    const repo = await track(makeRepo())
    const empty = await track(tempDir())
    const workdir = await track(tempDir('preflight-workdir-'))
    const prepared = await prepareWorkspace({
      workspace: { repo },
      workdir,
      name: 'job',
      roots: [],
      git: bindGit({ ...GIT, bin: join(empty, 'git'), path: empty }),
      allowLocalRepos: true,
    })
    expect(prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
  })

  // A server that accepts the connection and never answers: git's remote-http helper waits forever,
  // holding git's output pipes. The clone's time bound must still end it, helpers and all.
  it('ends a clone that hangs on the network at its time bound, with clone-failed', async () => {
    const sockets: Socket[] = []
    const server = createServer((socket) => void sockets.push(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const workdir = await track(tempDir('preflight-workdir-'))
    // while the clone waits on the network, its directory is there: closed to everyone but its owner
    server.once('connection', () => {
      modeWhileCloning = statSync(join(workdir, 'job')).mode & 0o777
    })
    let modeWhileCloning: number | undefined
    try {
      const started = Date.now()
      const prepared = await prepareWorkspace({
        workspace: { repo: `http://127.0.0.1:${port}/never.git` },
        workdir,
        name: 'job',
        roots: [],
        git: JOB_GIT,
        timeoutMs: 1_000,
      })
      expect(prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(modeWhileCloning).toBe(0o700)
    } finally {
      for (const socket of sockets) socket.destroy()
      server.close()
    }
  }, 20_000)

  it('refuses a repo value that starts with "-" (it would read as a git option)', async () => {
    const scratch = await track(tempDir())
    const marker = join(scratch, 'pwned')
    const prepared = await clone(`--upload-pack=touch ${marker}`)
    expect(prepared.ok ? 'ok' : prepared.reason).toBe('repo-not-allowed')
    expect(existsSync(marker)).toBe(false)
  })

  it('refuses a git remote helper such as ext::, which would run a command', async () => {
    const scratch = await track(tempDir())
    const marker = join(scratch, 'pwned')
    const prepared = await clone(`ext::sh -c touch% ${marker}`)
    expect(prepared.ok ? 'ok' : prepared.reason).toBe('repo-not-allowed')
    expect(existsSync(marker)).toBe(false)
  })

  // The coordinator refuses these at dispatch creation; a coordinator of another version may not.
  it('refuses a URL with a password or token before git runs, and never quotes the secret', async () => {
    const workdir = await track(tempDir('preflight-workdir-'))
    for (const repo of [
      'https://user:s3cret@example.invalid/r.git',
      'https://s3cret@example.invalid/r.git',
    ]) {
      const prepared = await prepareWorkspace({
        workspace: { repo },
        workdir,
        name: 'job-1',
        roots: [],
        git: JOB_GIT,
      })
      expect(prepared).toMatchObject({ ok: false, reason: 'repo-not-allowed' })
      expect(JSON.stringify(prepared)).not.toContain('s3cret')
      expect(prepared.ok ? '' : prepared.detail).toContain('--git-credentials')
    }
    expect(await readdir(workdir)).toEqual([])
  })

  it('refuses a local repository unless the worker allows local repositories', async () => {
    const repo = await track(makeRepo())
    const workdir = await track(tempDir('preflight-workdir-'))
    for (const value of [repo, `file://${repo}`]) {
      const prepared = await prepareWorkspace({
        workspace: { repo: value },
        workdir,
        name: 'job-1',
        roots: [],
        git: JOB_GIT,
      })
      expect(prepared).toMatchObject({ ok: false, reason: 'repo-not-allowed' })
    }
    expect(await readdir(workdir)).toEqual([])
  })

  // git looks for a local path `x:` before it reads `x:/path` as ssh: a link an earlier agent left in the
  // workdir would make it clone a local directory. Only the transport the spelling names may run.
  it('refuses the scp-like x:/path that git would resolve locally through a ./x: link', async () => {
    const repo = await track(makeRepo())
    const workdir = await track(tempDir('preflight-workdir-'))
    await symlink('/', join(workdir, 'x:'))
    const prepared = await prepareWorkspace({
      workspace: { repo: `x:${repo}` },
      workdir,
      name: 'job-1',
      roots: [],
      git: JOB_GIT,
    })
    expect(prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
    expect(prepared.ok ? '' : prepared.detail).toMatch(/transport 'file' not allowed/)
  })

  it('counts https, ssh, git URLs and scp-like addresses as remote', () => {
    for (const repo of [
      'https://example.invalid/r.git',
      'ssh://git@example.invalid/r',
      'git+ssh://example.invalid/r',
      'git://example.invalid/r',
      'git@example.invalid:o/r.git',
      'example.invalid:o/r.git',
    ]) {
      expect(refuseRepo(repo, false)).toBeUndefined()
    }
    for (const repo of ['/srv/repo', 'file:///srv/repo', 'FILE:///srv/repo', 'relative/repo', './a:b'])
      expect(refuseRepo(repo, false)).toBeDefined()
  })
})

describe('allowedPath: workspace.path only under a --workspace-root', () => {
  it('accepts a directory inside a root', async () => {
    const root = await track(tempDir())
    await mkdir(join(root, 'ws'))
    const prepared = await allowedPath(join(root, 'ws'), [root])
    expect(prepared).toEqual({ ok: true, dir: join(root, 'ws') })
  })

  it('refuses every path when the worker has no root', async () => {
    const root = await track(tempDir())
    expect(await allowedPath(root, [])).toMatchObject({ ok: false, reason: 'path-not-allowed' })
  })

  it('refuses a path outside every root', async () => {
    const root = await track(tempDir())
    const other = await track(tempDir())
    expect(await allowedPath(other, [root])).toMatchObject({ ok: false, reason: 'path-not-allowed' })
  })

  it('refuses a ".." path that climbs out of the root', async () => {
    const root = await track(tempDir())
    const other = await track(tempDir())
    expect(await allowedPath(`${root}/../${basename(other)}`, [root])).toMatchObject({
      ok: false,
      reason: 'path-not-allowed',
    })
  })

  it('refuses a symlink inside the root that points outside it', async () => {
    const root = await track(tempDir())
    const outside = await track(tempDir())
    await symlink(outside, join(root, 'escape'))
    expect(await allowedPath(join(root, 'escape'), [root])).toMatchObject({
      ok: false,
      reason: 'path-not-allowed',
    })
  })

  it('refuses a sibling whose name merely starts with the root', async () => {
    const root = await track(tempDir())
    const sibling = await track(Promise.resolve(`${root}-evil`))
    await mkdir(sibling)
    expect(await allowedPath(sibling, [root])).toMatchObject({ ok: false, reason: 'path-not-allowed' })
  })

  it('refuses a relative path', async () => {
    const root = await track(tempDir())
    expect(await allowedPath('ws', [root])).toMatchObject({ ok: false, reason: 'path-not-allowed' })
  })

  it('fails the dispatch with path-not-allowed before cloning anything', async () => {
    const workdir = await track(tempDir())
    const prepared = await prepareWorkspace({
      workspace: { repo: '/nonexistent', path: '/etc' },
      workdir,
      name: 'job',
      roots: [workdir],
      git: JOB_GIT,
    })
    expect(prepared).toMatchObject({ ok: false, reason: 'path-not-allowed' })
  })
})
