// A Service named `preflight` sets PREFLIGHT_PORT=tcp://IP:PORT in every pod of its namespace (Kubernetes'
// service links): the real binary refuses such a value by the variable's name, before it opens anything.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const BIN = join(import.meta.dirname, '../../bin/preflight.js')

function spawned(args: string[], env: Record<string, string>) {
  const run = spawnSync(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  })
  return { code: run.status, stderr: run.stderr }
}

describe('a Kubernetes service link in a variable preflight reads', () => {
  it('stops the coordinator with exit 2, naming PREFLIGHT_PORT and the cause', () => {
    // a database that cannot be reached: a refusal that came after opening it would exit 1, not 2
    const { code, stderr } = spawned(['coordinator', '--database-url', 'postgres://127.0.0.1:1/none'], {
      PREFLIGHT_PORT: 'tcp://10.96.0.7:8080',
    })
    expect(code).toBe(2)
    expect(stderr).toBe(
      'preflight: PREFLIGHT_PORT is "tcp://10.96.0.7:8080", not a port number: a Kubernetes service link ' +
        "(a Service's address, set in every pod of its namespace): set enableServiceLinks: false in the pod " +
        'spec (deploy/kubernetes does)\n',
    )
  })

  it('lets --port win over the variable, as every flag does', () => {
    const { code, stderr } = spawned(
      ['coordinator', '--port', '0', '--database-url', 'mysql://127.0.0.1/none'],
      { PREFLIGHT_PORT: 'tcp://10.96.0.7:8080' },
    )
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: 'preflight: the database URL must start with postgres:// or postgresql://\n',
    })
  })

  it('stops the worker with exit 2 when its coordinator variable holds one', () => {
    const { code, stderr } = spawned(['worker'], {
      PREFLIGHT_TOKEN: 'worker-token-0123456789',
      PREFLIGHT_COORDINATOR: 'tcp://10.96.0.7:8080',
    })
    expect(code).toBe(2)
    expect(stderr).toMatch(
      /^preflight: PREFLIGHT_COORDINATOR is "tcp:\/\/10\.96\.0\.7:8080", not an http\(s\) URL: a Kubernetes service link/,
    )
    expect(stderr.trim().split('\n')).toHaveLength(1)
  })
})
