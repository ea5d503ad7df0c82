import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'preflight.js')

// The real binary (dist/ is built by the global setup), with a token and no other PREFLIGHT_* variable.
function worker(...args: string[]) {
  return workerWith({ PREFLIGHT_TOKEN: 't' }, ...args)
}

function workerWith(env: Record<string, string>, ...args: string[]) {
  const res = spawnSync(process.execPath, [BIN, 'worker', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  })
  return { code: res.status, stderr: res.stderr }
}

describe('preflight worker arguments', () => {
  it('exits 2 with one sentence when no coordinator is given', () => {
    const { code, stderr } = worker()
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain('--coordinator')
  })

  it.each([
    [['--metrics-port', 'http'], '--metrics-port'],
    [['--metrics-port', '70000'], '--metrics-port'],
    [['--metrics-host', '0.0.0.0'], '--metrics-host needs --metrics-port'],
  ])('exits 2 for metrics flags %j', (flags, says) => {
    const r = workerWith(
      { PREFLIGHT_TOKEN: 'worker-token-0123456789' },
      '--coordinator',
      'http://127.0.0.1:1',
      ...flags,
    )
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining(says) })
  })

  it('exits 2 when no token is given', () => {
    expect(workerWith({}, '--coordinator', 'http://127.0.0.1:1')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('PREFLIGHT_TOKEN'),
    })
  })

  // /proc/<pid>/cmdline is readable by every uid on the machine, agents included.
  it('refuses a token on the command line, naming the ways that keep it secret', () => {
    const { code, stderr } = worker('--coordinator', 'http://127.0.0.1:1', '--token', 'secret')
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(/PREFLIGHT_TOKEN.*--token-file/)
  })

  it('exits 2 for a --token-file it cannot read or that is empty', () => {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-cli-'))
    try {
      const empty = join(dir, 'empty')
      writeFileSync(empty, '\n')
      for (const file of [join(dir, 'missing'), empty]) {
        expect(workerWith({}, '--coordinator', 'http://127.0.0.1:1', '--token-file', file)).toMatchObject({
          code: 2,
          stderr: expect.stringContaining('--token-file'),
        })
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('exits 2 for a concurrency that is not a positive whole number', () => {
    expect(worker('--coordinator', 'http://127.0.0.1:1', '--concurrency', '0').code).toBe(2)
  })

  it('exits 2 for a --pass-env that is not a variable name', () => {
    expect(worker('--coordinator', 'http://127.0.0.1:1', '--pass-env', 'A=B').code).toBe(2)
  })

  it('exits 2 for a coordinator that is not a URL', () => {
    expect(worker('--coordinator', 'not a url').code).toBe(2)
    expect(worker('--coordinator', 'ftp://127.0.0.1/')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('http(s)'),
    })
  })

  it('exits 2 for a --log-level or --log-format it does not know, naming the ones it does', () => {
    expect(worker('--coordinator', 'http://127.0.0.1:1', '--log-level', 'chatty')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        '--log-level must be one of trace, debug, info, warn, error, fatal, silent',
      ),
    })
    expect(worker('--coordinator', 'http://127.0.0.1:1', '--log-format', 'xml')).toMatchObject({
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

    const refused = (args: string[], says: string) => {
      const { code, stderr } = worker(...base, ...args)
      expect(code).toBe(2)
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(says)
    }

    it('exits 2 for --ssh-key without --ssh-known-hosts, and the other way round', () => {
      refused(['--ssh-key', file], '--ssh-known-hosts')
      refused(['--ssh-known-hosts', file], '--ssh-key')
    })

    it('exits 2 for a secret file that is missing, not a regular file, or has an odd path', () => {
      refused(['--git-credentials', join(dir, 'missing')], 'does not exist')
      refused(['--git-credentials', dir], 'not a regular file')
      refused(['--ssh-key', file, '--ssh-known-hosts', join(dir, 'a b')], '--ssh-known-hosts')
    })

    it('exits 2 for a --repo-allow pattern that is not one', () => {
      refused(['--repo-allow', 'https://github.com/acme/%2A'], '--repo-allow')
      refused(['--repo-allow', 'https://github.com/acme/x**'], '--repo-allow')
    })
  })
})

// Switching uids needs root (CI runs as root); each refusal is one sentence and exit 2, before any claim.
describe.runIf(process.getuid?.() === 0)('preflight worker --agent-uid', () => {
  function inOpenDir(run: (dir: string) => void) {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-cli-'))
    try {
      chmodSync(dir, 0o755)
      run(dir)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('refuses a token file the agents could read', () => {
    inOpenDir((dir) => {
      const file = join(dir, 'token')
      writeFileSync(file, 'secret\n', { mode: 0o644 })
      const run = workerWith(
        {},
        '--coordinator',
        'http://127.0.0.1:1',
        '--token-file',
        file,
        '--agent-uid',
        '61200',
      )
      expect(run.code).toBe(2)
      expect(run.stderr).toContain('readable by the agents')
    })
  })

  it('refuses a range holding a uid or gid that names a user or group (nobody is 65534)', () => {
    const run = worker('--coordinator', 'http://127.0.0.1:1', '--agent-uid', '65534')
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('65534 already names a user or group')
  })

  it('refuses a shared workdir (it would become 0711 for everyone)', () => {
    const run = worker('--coordinator', 'http://127.0.0.1:1', '--agent-uid', '61200', '--workdir', tmpdir())
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('shared with other users')
    expect(statSync(tmpdir()).mode & 0o7777).toBe(0o1777)
  })

  it('refuses a git that lives where the agents could replace it', () => {
    inOpenDir((dir) => {
      const bin = join(dir, 'bin')
      mkdirSync(bin, { mode: 0o777 })
      chmodSync(bin, 0o777)
      writeFileSync(join(bin, 'git'), '#!/bin/sh\nexec git "$@"\n', { mode: 0o755 })
      const run = workerWith(
        { PREFLIGHT_TOKEN: 't', PATH: `${bin}:${process.env.PATH}` },
        '--coordinator',
        'http://127.0.0.1:1',
        '--agent-uid',
        '61200',
      )
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`may write ${bin}`)
    })
  })
})
