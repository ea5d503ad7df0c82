import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runRefused } from '../support/cli.js'

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'preflight.js')

// The real binary (dist/ is built by the global setup), with a token and no other PREFLIGHT_* variable:
// for the exit status and stderr of a real process.
function spawned(...args: string[]) {
  const res = spawnSync(process.execPath, [BIN, 'worker', ...args], {
    env: { PATH: process.env.PATH ?? '', PREFLIGHT_TOKEN: 't' },
    encoding: 'utf8',
    timeout: 20_000,
  })
  return { code: res.status, stderr: res.stderr }
}

// `preflight worker` in this process with a token and no other PREFLIGHT_* variable.
function worker(...args: string[]) {
  return workerWith({ PREFLIGHT_TOKEN: 't' }, ...args)
}

// A refusal, in this process: it comes before the worker starts anything (test/support/cli.ts).
const workerWith = (env: Record<string, string>, ...args: string[]) => runRefused(['worker', ...args], env)

describe('preflight worker arguments', () => {
  it('exits 2 with one sentence when no coordinator is given', () => {
    const { code, stderr } = spawned()
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain('--coordinator')
  })

  it.each([
    [['--metrics-port', 'http'], '--metrics-port'],
    [['--metrics-port', '70000'], '--metrics-port'],
    [['--metrics-host', '0.0.0.0'], '--metrics-host needs --metrics-port'],
  ])('exits 2 for metrics flags %j', async (flags, says) => {
    const r = await workerWith(
      { PREFLIGHT_TOKEN: 'worker-token-0123456789' },
      '--coordinator',
      'http://127.0.0.1:1',
      ...flags,
    )
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining(says) })
  })

  it('exits 2 when no token is given', async () => {
    expect(await workerWith({}, '--coordinator', 'http://127.0.0.1:1')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('PREFLIGHT_TOKEN'),
    })
  })

  // /proc/<pid>/cmdline is readable by every uid on the machine, agents included.
  it('refuses a token on the command line, naming the ways that keep it secret', async () => {
    const { code, stderr } = await worker('--coordinator', 'http://127.0.0.1:1', '--token', 'secret')
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(/PREFLIGHT_TOKEN.*--token-file/)
  })

  it('exits 2 for a --token-file it cannot read or that is empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-cli-'))
    try {
      const empty = join(dir, 'empty')
      writeFileSync(empty, '\n')
      for (const file of [join(dir, 'missing'), empty]) {
        expect(
          await workerWith({}, '--coordinator', 'http://127.0.0.1:1', '--token-file', file),
        ).toMatchObject({
          code: 2,
          stderr: expect.stringContaining('--token-file'),
        })
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('exits 2 for a concurrency that is not a positive whole number', async () => {
    expect((await worker('--coordinator', 'http://127.0.0.1:1', '--concurrency', '0')).code).toBe(2)
  })

  it('exits 2 for a --pass-env that is not a variable name', async () => {
    expect((await worker('--coordinator', 'http://127.0.0.1:1', '--pass-env', 'A=B')).code).toBe(2)
  })

  it('exits 2 for a coordinator that is not a URL', async () => {
    expect((await worker('--coordinator', 'not a url')).code).toBe(2)
    expect(await worker('--coordinator', 'ftp://127.0.0.1/')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('http(s)'),
    })
  })

  it('exits 2 for a --log-level or --log-format it does not know, naming the ones it does', async () => {
    expect(await worker('--coordinator', 'http://127.0.0.1:1', '--log-level', 'chatty')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        '--log-level must be one of trace, debug, info, warn, error, fatal, silent',
      ),
    })
    expect(await worker('--coordinator', 'http://127.0.0.1:1', '--log-format', 'xml')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--log-format must be one of json, pretty'),
    })
  })

  describe('clone credentials and --repo-allow', () => {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-cli-'))
    const file = join(dir, 'git-credentials')
    writeFileSync(file, 'https://u:t@example.invalid\n', { mode: 0o600 })
    afterAll(() => rmSync(dir, { recursive: true, force: true }))
    const base = ['--coordinator', 'http://127.0.0.1:1']

    const refused = async (args: string[], says: string) => {
      const { code, stderr } = await worker(...base, ...args)
      expect(code).toBe(2)
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(says)
    }

    it('exits 2 for --ssh-key without --ssh-known-hosts, and the other way round', async () => {
      await refused(['--ssh-key', file], '--ssh-known-hosts')
      await refused(['--ssh-known-hosts', file], '--ssh-key')
    })

    it('exits 2 for a secret file that is missing, not a regular file, or has an odd path', async () => {
      await refused(['--git-credentials', join(dir, 'missing')], 'does not exist')
      await refused(['--git-credentials', dir], 'not a regular file')
      await refused(['--ssh-key', file, '--ssh-known-hosts', join(dir, 'a b')], '--ssh-known-hosts')
    })

    it('exits 2 for a --repo-allow pattern that is not one', async () => {
      await refused(['--repo-allow', 'https://github.com/acme/%2A'], '--repo-allow')
      await refused(['--repo-allow', 'https://github.com/acme/x**'], '--repo-allow')
    })
  })
})

// Switching uids needs root (CI runs as root); each refusal is one sentence and exit 2, before any claim.
// These refusals come after the worker made its temp workdir, which it removes (the last case).
describe.runIf(process.getuid?.() === 0)('preflight worker --agent-uid', () => {
  const agentUid = (env: Record<string, string>, uid: string, ...flags: string[]) =>
    workerWith(env, '--coordinator', 'http://127.0.0.1:1', '--agent-uid', uid, ...flags)

  async function inOpenDir(run: (dir: string) => Promise<void>) {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-cli-'))
    try {
      chmodSync(dir, 0o755)
      await run(dir)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('refuses a token file the agents could read', async () => {
    await inOpenDir(async (dir) => {
      const file = join(dir, 'token')
      writeFileSync(file, 'secret\n', { mode: 0o644 })
      const run = await agentUid({}, '61200', '--token-file', file)
      expect(run.code).toBe(2)
      expect(run.stderr).toContain('readable by the agents')
    })
  })

  it('refuses a range holding a uid or gid that names a user or group (nobody is 65534)', async () => {
    const run = await agentUid({ PREFLIGHT_TOKEN: 't' }, '65534')
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('65534 already names a user or group')
  })

  it('refuses a shared workdir (it would become 0711 for everyone)', async () => {
    const run = await agentUid({ PREFLIGHT_TOKEN: 't' }, '61200', '--workdir', tmpdir())
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('shared with other users')
    expect(statSync(tmpdir()).mode & 0o7777).toBe(0o1777)
  })

  it('refuses a workdir the agents could replace: its parent is open to them', async () => {
    await inOpenDir(async (dir) => {
      chmodSync(dir, 0o777)
      const workdir = join(dir, 'work')
      mkdirSync(workdir, { mode: 0o700 })
      const run = await agentUid({ PREFLIGHT_TOKEN: 't' }, '61200', '--workdir', workdir)
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`may replace ${dir}`)
    })
  })

  it('refuses a git that lives where the agents could replace it', async () => {
    await inOpenDir(async (dir) => {
      const bin = join(dir, 'bin')
      mkdirSync(bin, { mode: 0o777 })
      chmodSync(bin, 0o777)
      writeFileSync(join(bin, 'git'), '#!/bin/sh\nexec git "$@"\n', { mode: 0o755 })
      const run = await agentUid({ PREFLIGHT_TOKEN: 't', PATH: `${bin}:${process.env.PATH}` }, '61200')
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`may write ${bin}`)
    })
  })

  it('removes the temp workdir it made when a flag checked after it is refused', async () => {
    await inOpenDir(async (dir) => {
      const run = await agentUid({ PREFLIGHT_TOKEN: 't', TMPDIR: dir }, '65534')
      expect(run.code).toBe(2)
      // (git's empty HOME, preflight-git-home-<uid>, is kept there by design: worker/run/git-home.ts)
      expect(readdirSync(dir).filter((name) => name.startsWith('preflight-work-'))).toEqual([])
    })
  })
})
