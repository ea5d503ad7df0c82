// prepareWorkspace against real servers on 127.0.0.1: a private repository over HTTP (basic auth, as a
// forge answers), a public one over git:// (git daemon), and the worker's --repo-allow rules.
import { readdirSync, readFileSync } from 'node:fs'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { CloneCredentials } from '../../worker/clone-credentials.js'
import { type PrepareOptions, prepareWorkspace } from '../../worker/prepare.js'
import { removeAll, tempDir } from '../support/git-fixtures.js'
import { bareRepos, type GitServer, startGitDaemon, startHttpGitServer } from '../support/git-servers.js'
import { JOB_GIT } from '../support/worker-git.js'

const dirs: string[] = []
afterEach(() => removeAll(dirs))

async function track(dir: Promise<string>): Promise<string> {
  const d = await dir
  dirs.push(d)
  return d
}

const USER = 'ci-bot'
const PASSWORD = `tok-${Math.random().toString(36).slice(2)}-secret`

// Processes whose command line or environment held the password while the server answered a request
// with credentials: git, its remote helper and whatever they run are alive at that moment.
const exposedIn: string[] = []
let scans = 0
function scanProcesses() {
  scans++
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    for (const file of ['cmdline', 'environ']) {
      try {
        if (readFileSync(`/proc/${pid}/${file}`, 'latin1').includes(PASSWORD))
          exposedIn.push(`${pid}/${file}`)
      } catch {
        // gone, or not ours to read
      }
    }
  }
}

let root: string
let http: GitServer & { requests(): number }
let daemon: GitServer
beforeAll(async () => {
  root = await bareRepos('private', { 'a.txt': 'private\n' })
  http = await startHttpGitServer(root, { user: USER, password: PASSWORD }, scanProcesses)
  daemon = await startGitDaemon(root)
})
afterAll(async () => {
  await Promise.all([http?.close(), daemon?.close()])
  await removeAll([root])
})

// A credential-store file (mode 600, as an operator keeps it) with one line.
async function credentialsFile(line: string): Promise<string> {
  const file = join(await track(tempDir('preflight-secrets-')), 'git-credentials')
  await writeFile(file, `${line}\n`, { mode: 0o600 })
  return file
}

const privateRepo = () => `${http.url}/private.git`
// A line of git's credential-store format for the server; the wrong password holds the right one.
const line = (password = PASSWORD) => `http://${USER}:${password}@${new URL(http.url).host}`

async function clone(repo: string, extra: Partial<PrepareOptions> = {}) {
  const workdir = await track(tempDir('preflight-workdir-'))
  const prepared = await prepareWorkspace({
    workspace: { repo },
    workdir,
    name: 'job-1',
    roots: [],
    git: JOB_GIT,
    // bounded far above what these clones take: a prompt or a hang shows as "did not finish"
    timeoutMs: 20_000,
    ...extra,
  })
  return { prepared, detail: prepared.ok ? '' : prepared.detail }
}

const withFile = (gitCredentials: string): { cloneCredentials: CloneCredentials } => ({
  cloneCredentials: { gitCredentials },
})

describe('prepareWorkspace: a private repository over https/http with --git-credentials', () => {
  it('clones with the credentials file', async () => {
    const { prepared } = await clone(privateRepo(), withFile(await credentialsFile(line())))
    if (!prepared.ok) throw new Error(prepared.detail)
    expect(await readFile(join(prepared.dir, 'a.txt'), 'utf8')).toBe('private\n')
  })

  it('fails with clone-failed without credentials: git gives up by itself, with no prompt', async () => {
    const { prepared, detail } = await clone(privateRepo())
    expect(prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
    expect(detail).not.toMatch(/did not finish/)
  })

  it('fails with clone-failed when the file has no line for the host', async () => {
    const file = await credentialsFile(`https://${USER}:${PASSWORD}@other.example.invalid`)
    const { prepared, detail } = await clone(privateRepo(), withFile(file))
    expect(prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
    expect(detail).not.toMatch(/did not finish/)
  })

  it('never puts the secret in a result, a detail, a command line or an environment', async () => {
    exposedIn.length = 0
    scans = 0
    const good = await credentialsFile(line())
    const cloned = await clone(privateRepo(), withFile(good))
    const missingRef = await prepareWorkspace({
      workspace: { repo: privateRepo(), ref: 'no-such-ref' },
      workdir: await track(tempDir('preflight-workdir-')),
      name: 'job-2',
      roots: [],
      git: JOB_GIT,
      ...withFile(good),
    })
    const wrong = await clone(privateRepo(), withFile(await credentialsFile(line(`wrong-${PASSWORD}`))))
    expect(cloned.prepared.ok).toBe(true)
    expect(missingRef).toMatchObject({ ok: false, reason: 'ref-not-found' })
    expect(wrong.prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
    for (const result of [cloned.prepared, missingRef, wrong.prepared])
      expect(JSON.stringify(result)).not.toContain(PASSWORD)
    // the scan ran on every request with credentials and found the password in no process
    expect(scans).toBeGreaterThan(0)
    expect(exposedIn).toEqual([])
  })

  // git asks its helper to `store` after a success and to `erase` after a refusal: credential-store
  // would rewrite the file (mode from the umask) or delete the line. Only `get` may reach it.
  it('leaves the credentials file as it was after a clone and after a refused password', async () => {
    const good = await credentialsFile(line())
    const refused = await credentialsFile(line(`wrong-${PASSWORD}`))
    const before = await Promise.all(
      [good, refused].map(async (f) => [await readFile(f, 'utf8'), await stat(f)]),
    )
    expect((await clone(privateRepo(), withFile(good))).prepared.ok).toBe(true)
    expect((await clone(privateRepo(), withFile(refused))).prepared.ok).toBe(false)
    for (const [i, file] of [good, refused].entries()) {
      const [text, info] = before[i] as [string, Awaited<ReturnType<typeof stat>>]
      expect(await readFile(file, 'utf8')).toBe(text)
      expect((await stat(file)).mode).toBe(info.mode)
      expect((await stat(file)).ino).toBe(info.ino)
    }
  })

  it("leaves no credential in the clone's config, so the checks' git runs have no helper", async () => {
    const { prepared } = await clone(privateRepo(), withFile(await credentialsFile(line())))
    if (!prepared.ok) throw new Error(prepared.detail)
    const config = await readFile(join(prepared.dir, '.git', 'config'), 'utf8')
    expect(config).not.toMatch(/credential|sshCommand/i)
    expect(config).not.toContain(PASSWORD)
    // the git run of a check or the baseline: the job's git as they call it
    const helper = await JOB_GIT.run(prepared.dir, ['config', '--get-regexp', '^credential\\.'])
    expect(helper).toMatchObject({ exitCode: 1, stdout: '' })
  })
})

describe('prepareWorkspace: a public repository over git://', () => {
  it('clones from git daemon with the default rules', async () => {
    const { prepared } = await clone(`${daemon.url}/private.git`)
    if (!prepared.ok) throw new Error(prepared.detail)
    expect(await readFile(join(prepared.dir, 'a.txt'), 'utf8')).toBe('private\n')
  })
})

describe('prepareWorkspace: --repo-allow', () => {
  it('refuses a remote outside the patterns before any network access', async () => {
    const before = http.requests()
    const { prepared, detail } = await clone(privateRepo(), {
      repoAllow: ['https://github.com/acme/*'],
      ...withFile(await credentialsFile(line())),
    })
    expect(prepared).toMatchObject({ ok: false, reason: 'repo-not-allowed' })
    expect(detail).toContain('--repo-allow')
    expect(http.requests()).toBe(before)
  })

  it('clones a remote a pattern allows', async () => {
    const { prepared } = await clone(privateRepo(), {
      repoAllow: ['https://github.com/acme/*', `${http.url}/*`],
      ...withFile(await credentialsFile(line())),
    })
    expect(prepared.ok).toBe(true)
  })

  it('does not follow an allowed remote that redirects to one the patterns refuse', async () => {
    const redirector = createServer((req, res) => {
      res.writeHead(302, { location: `${http.url}${req.url}` }).end()
    })
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve))
    const at = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`
    try {
      const before = http.requests()
      const { prepared } = await clone(`${at}/private.git`, {
        repoAllow: [`${at}/*`],
        ...withFile(await credentialsFile(line())),
      })
      expect(prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
      expect(http.requests()).toBe(before)
      // the control: without patterns git follows the redirect (its default, "initial")
      expect((await clone(`${at}/private.git`, withFile(await credentialsFile(line())))).prepared.ok).toBe(
        true,
      )
    } finally {
      redirector.close()
    }
  })

  it('refuses a remote that climbs out of an allowed path with ".." before any network access', async () => {
    const before = http.requests()
    const { prepared } = await clone(`${http.url}/team/../private.git`, {
      repoAllow: [`${http.url}/team/**`],
    })
    expect(prepared).toMatchObject({ ok: false, reason: 'repo-not-allowed' })
    expect(http.requests()).toBe(before)
  })
})
