import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

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
})
