import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'preflight.js')

// The real binary (dist/ is built by the global setup), with none of the PREFLIGHT_* fallbacks set.
function worker(...args: string[]) {
  const res = spawnSync(process.execPath, [BIN, 'worker', ...args], {
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
    timeout: 20_000,
  })
  return { code: res.status, stderr: res.stderr }
}

describe('preflight worker arguments', () => {
  it('exits 2 with one sentence when no coordinator is given', () => {
    const { code, stderr } = worker('--token', 't')
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain('--coordinator')
  })

  it('exits 2 when no token is given', () => {
    expect(worker('--coordinator', 'http://127.0.0.1:1').code).toBe(2)
  })

  it('exits 2 for a concurrency that is not a positive whole number', () => {
    expect(worker('--coordinator', 'http://127.0.0.1:1', '--token', 't', '--concurrency', '0').code).toBe(2)
  })

  it('exits 2 for a --pass-env that is not a variable name', () => {
    expect(worker('--coordinator', 'http://127.0.0.1:1', '--token', 't', '--pass-env', 'A=B').code).toBe(2)
  })

  it('exits 2 for a coordinator that is not a URL', () => {
    expect(worker('--coordinator', 'not a url', '--token', 't').code).toBe(2)
    expect(worker('--coordinator', 'ftp://127.0.0.1/', '--token', 't')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('http(s)'),
    })
  })

  describe('clone credentials and --repo-allow', () => {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-cli-'))
    const file = join(dir, 'git-credentials')
    writeFileSync(file, 'https://u:t@example.invalid\n', { mode: 0o600 })
    afterAll(() => rmSync(dir, { recursive: true, force: true }))
    const base = ['--coordinator', 'http://127.0.0.1:1', '--token', 't']

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
