// What a deployment starts from: the secrets file stays out of git and images, the coordinator image's
// HEALTHCHECK asks the port the coordinator listens on, and Debian's docker-compose 1.29 reads compose.yaml.
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..')
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')

describe('.env', () => {
  it('is ignored by git', () => {
    const run = spawnSync('git', ['check-ignore', '-q', '--no-index', '.env'], { cwd: ROOT })
    expect(run.status).toBe(0)
    expect(spawnSync('git', ['check-ignore', '-q', '--no-index', '.env.example'], { cwd: ROOT }).status).toBe(
      1,
    )
  })

  it('is left out of the image build context', () => {
    const patterns = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
    expect(patterns).toContain('.env')
  })
})

// The HEALTHCHECK's own command, as the Dockerfile has it, run against a server on loopback.
// Run with tini and /run/preflight replaced by the test's own: what tini is started with, and the file.
describe("the worker image's entrypoint", () => {
  function entry(args: string[], env: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'preflight-entry-'))
    try {
      const recorder = join(dir, 'tini')
      writeFileSync(recorder, `#!/bin/sh\n{ printf 'arg %s\\n' "$@"; env; } > ${dir}/seen\n`, { mode: 0o755 })
      const script = read('bin/worker-entrypoint.sh')
        .replaceAll('/usr/bin/tini', recorder)
        .replaceAll('/run/preflight', join(dir, 'run'))
      const run = spawnSync('sh', ['-c', script, 'entrypoint', ...args], {
        env: { PATH: '/usr/bin:/bin', ...env },
      })
      expect(run.status).toBe(0)
      const seen = readFileSync(join(dir, 'seen'), 'utf8')
      const token = join(dir, 'run', 'token')
      const file = existsSync(token)
        ? {
            text: readFileSync(token, 'utf8'),
            mode: statSync(token).mode & 0o777,
            dirMode: statSync(join(dir, 'run')).mode & 0o777,
          }
        : undefined
      return { seen: seen.replaceAll(dir, '<dir>'), file }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('starts tini and the worker without PREFLIGHT_TOKEN, which it moved to a root-only file', () => {
    const { seen, file } = entry(['worker', '--agent-uid', '100000'], { PREFLIGHT_TOKEN: 'pf_worker_secret' })
    expect(seen).toContain(
      'arg --\narg preflight\narg worker\narg --token-file\narg <dir>/run/token\narg --agent-uid\narg 100000\n',
    )
    expect(seen).not.toContain('pf_worker_secret')
    expect(file).toEqual({ text: 'pf_worker_secret\n', mode: 0o600, dirMode: 0o700 })
  })

  it('passes any other command, or a worker without the variable, through as given', () => {
    expect(entry(['migrate'], { PREFLIGHT_TOKEN: 'x' }).seen).toMatch(/^arg --\narg preflight\narg migrate\n/)
    const bare = entry(['worker', '--token-file', '/run/secrets/t'], {})
    expect(bare.seen).toMatch(/^arg --\narg preflight\narg worker\narg --token-file\narg \/run\/secrets\/t\n/)
    expect(bare.file).toBeUndefined()
  })
})

describe("the coordinator image's HEALTHCHECK", () => {
  const target = read('Dockerfile').split(/^FROM .* AS coordinator$/m)[1] ?? ''
  const command = JSON.parse(/HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])$/m.exec(target)?.[1] ?? '[]') as string[]
  let server: Server
  let port: number
  beforeAll(async () => {
    server = createServer((req, res) => res.writeHead(req.url === '/healthz' ? 200 : 404).end())
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise<void>((r) => (server.listening ? server.close(() => r()) : r())))

  // asynchronously: the server answers from this process's event loop
  const check = async (env: Record<string, string>) => {
    const [file, ...args] = command
    if (file !== 'node') throw new Error(`the HEALTHCHECK runs ${file}, not node: ${JSON.stringify(command)}`)
    return promisify(execFile)(process.execPath, args, { env, timeout: 10_000 }).then(
      () => 0,
      (err: { code?: number }) => err.code,
    )
  }

  it('asks the port PREFLIGHT_PORT names, which the image sets and the coordinator listens on', async () => {
    expect(target).toMatch(/^ENV PREFLIGHT_PORT=8080$/m)
    expect(target).toMatch(/^CMD \["coordinator"\]$/m)
    expect(await check({ PREFLIGHT_PORT: String(port) })).toBe(0)
    await new Promise((r) => server.close(r))
    expect(await check({ PREFLIGHT_PORT: String(port) })).toBe(1)
  })
})

const compose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' })

// CI installs docker-compose (.ci/run); Compose v2 is not packaged for Debian bookworm.
describe.runIf(compose.status === 0)("compose.yaml, as Debian's docker-compose 1.29 reads it", () => {
  const env = {
    PATH: process.env.PATH ?? '',
    POSTGRES_PASSWORD: 'p',
    PREFLIGHT_ORCHESTRATOR_TOKEN: 'o',
    PREFLIGHT_WORKER_TOKEN: 'w',
    PREFLIGHT_OPERATOR_TOKEN: 'op',
    PREFLIGHT_PORT: '9123',
  }
  const config = () =>
    execFileSync(
      'docker-compose',
      ['-f', join(ROOT, 'compose.yaml'), '--project-directory', ROOT, 'config'],
      {
        env,
        encoding: 'utf8',
      },
    )

  it('is accepted, with the coordinator on PREFLIGHT_PORT inside and out and the workers pointed at it', () => {
    const text = config()
    expect(text).toMatch(/PREFLIGHT_PORT: '9123'/)
    expect(text).toMatch(/published: 9123\s+target: 9123/)
    expect(text).toContain('http://coordinator:9123')
    expect(text).not.toMatch(/^name:/m)
  })
})
