import { execFileSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  credentialArgs,
  secretFileProblem,
  secretFiles,
  sshCommand,
  storeHelper,
} from '../../worker/clone-credentials.js'
import { prepareWorkspace } from '../../worker/prepare.js'
import { bindGit } from '../../worker/run/job-git.js'
import { removeAll, tempDir } from '../support/git-fixtures.js'
import { GIT } from '../support/worker-git.js'

const dirs: string[] = []
afterEach(() => removeAll(dirs))

async function scratch(): Promise<string> {
  const dir = await tempDir()
  dirs.push(dir)
  return dir
}

const ssh = { key: '/etc/preflight/id_ed25519', knownHosts: '/etc/preflight/known_hosts' }

describe('secretFiles', () => {
  it('lists every file that holds a secret, and none without credentials', () => {
    expect(
      secretFiles({ cloneCredentials: { gitCredentials: '/etc/preflight/git-credentials', ssh } }),
    ).toEqual(['/etc/preflight/git-credentials', ssh.key])
    expect(secretFiles({})).toEqual([])
  })
})

describe('credentialArgs', () => {
  const credentials = { gitCredentials: '/etc/preflight/git-credentials', ssh }

  it('gives http(s) the store helper alone, ssh the ssh command alone, git:// and local paths nothing', () => {
    expect(credentialArgs(credentials, 'https', '/usr/bin/git')).toEqual([
      '-c',
      'credential.helper=',
      '-c',
      `credential.helper=${storeHelper('/usr/bin/git', credentials.gitCredentials)}`,
    ])
    expect(credentialArgs(credentials, 'http', '/usr/bin/git')).toHaveLength(4)
    expect(credentialArgs(credentials, 'ssh', '/usr/bin/git')).toEqual([
      '-c',
      `core.sshCommand=${sshCommand(ssh)}`,
    ])
    expect(credentialArgs(credentials, 'git', '/usr/bin/git')).toEqual([])
    expect(credentialArgs(credentials, 'file', '/usr/bin/git')).toEqual([])
    expect(credentialArgs(undefined, 'https', '/usr/bin/git')).toEqual([])
  })
})

describe('storeHelper', () => {
  // git runs `<helper without "!"> "$@"` through sh with the action as the argument; a fake git with
  // a quote and a space in its path shows what the shell hands on.
  async function runHelper(action: string): Promise<string> {
    const parent = await scratch()
    const dir = join(parent, "it's here")
    await mkdir(dir)
    const out = join(parent, 'argv')
    await writeFile(join(dir, 'git'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${out}'\n`, { mode: 0o755 })
    const helper = storeHelper(join(dir, 'git'), '/etc/preflight/git-credentials')
    execFileSync('sh', ['-c', `${helper.slice(1)} "$@"`, 'helper', action])
    return readFile(out, 'utf8').catch(() => '')
  }

  it('runs credential-store with the file for "get", the paths quoted', async () => {
    expect(await runHelper('get')).toBe('credential-store\n--file=/etc/preflight/git-credentials\nget\n')
  })

  it('never runs credential-store for "store" or "erase", which would rewrite the file', async () => {
    expect(await runHelper('store')).toBe('')
    expect(await runHelper('erase')).toBe('')
  })
})

// There is no sshd here: the ssh path is tested as the command string, and through git with a stand-in
// `ssh` first on the worker's PATH that records the arguments git gave it.
describe('sshCommand', () => {
  it('uses only the given key and known hosts, no ssh config and no prompt', () => {
    expect(sshCommand(ssh)).toBe(
      "ssh -i '/etc/preflight/id_ed25519' -o IdentitiesOnly=yes -o 'UserKnownHostsFile=/etc/preflight/known_hosts'" +
        ' -o StrictHostKeyChecking=yes -F /dev/null -o BatchMode=yes',
    )
  })

  async function sshArgv(cloneCredentials?: { ssh: typeof ssh }): Promise<string[]> {
    const bin = await scratch()
    const out = join(bin, 'argv')
    await writeFile(join(bin, 'ssh'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${out}'\nexit 1\n`, { mode: 0o755 })
    const prepared = await prepareWorkspace({
      workspace: { repo: 'ssh://git@example.invalid/acme/x.git' },
      workdir: await scratch(),
      name: 'job',
      roots: [],
      git: bindGit({ ...GIT, path: `${bin}:${process.env.PATH}` }),
      ...(cloneCredentials ? { cloneCredentials } : {}),
    })
    expect(prepared).toMatchObject({ ok: false, reason: 'clone-failed' })
    return (await readFile(out, 'utf8')).trim().split('\n')
  }

  it('is what git runs for an ssh clone with --ssh-key', async () => {
    const argv = await sshArgv({ ssh })
    expect(argv.slice(0, 11)).toEqual([
      '-i',
      ssh.key,
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      `UserKnownHostsFile=${ssh.knownHosts}`,
      '-o',
      'StrictHostKeyChecking=yes',
      '-F',
      '/dev/null',
      '-o',
    ])
    expect(argv).toContain('git@example.invalid')
  })

  it('is not used without --ssh-key', async () => {
    expect(await sshArgv()).not.toContain('-i')
  })
})

describe('secretFileProblem', () => {
  it('accepts a readable regular file', async () => {
    const file = join(await scratch(), 'git-credentials')
    await writeFile(file, 'https://u:t@example.invalid\n', { mode: 0o600 })
    expect(await secretFileProblem(file)).toBeUndefined()
  })

  it('refuses a missing file, a directory and a path a shell or ssh would read specially', async () => {
    const dir = await scratch()
    expect(await secretFileProblem(join(dir, 'missing'))).toMatch(/does not exist/)
    expect(await secretFileProblem(dir)).toMatch(/not a regular file/)
    for (const odd of [join(dir, 'a b'), join(dir, "a'b"), join(dir, 'a%d'), join(dir, '$(x)'), 'relative'])
      expect(await secretFileProblem(odd)).toMatch(/may hold only/)
  })
})
