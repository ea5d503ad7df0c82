// compose.yaml itself: `up --build --scale worker=2` on the stand-in base images (NODE_IMAGE,
// POSTGRES_IMAGE) reaches a succeeded dispatch, and `down -v` leaves no container or volume behind.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import type { StartedTestContainer } from 'testcontainers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { images, ROOT, settled, startGitServer } from '../support/containers.js'
import { dispatch, freePort, register, TOKENS } from '../support/e2e.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)

// `docker compose` (v2) where the plugin is installed, else Debian's docker-compose 1.29.
async function composeCommand(): Promise<string[] | undefined> {
  for (const command of [['docker', 'compose'], ['docker-compose']]) {
    const [file = '', ...args] = command
    if (
      await run(file, [...args, 'version']).then(
        () => true,
        () => false,
      )
    )
      return command
  }
  return undefined
}

const compose = await composeCommand()
const project = `preflight-ci-${randomBytes(3).toString('hex')}`
let url: string
let git: StartedTestContainer | undefined
let env: NodeJS.ProcessEnv

async function composeRun(...args: string[]) {
  const [file = '', ...pre] = compose ?? []
  return run(file, [...pre, '-p', project, '-f', `${ROOT}/compose.yaml`, ...args], {
    cwd: ROOT,
    env,
    maxBuffer: 64 * 1024 * 1024,
  })
}

const containersOf = async (all = true) =>
  (
    await run('docker', [
      'ps',
      '-q',
      ...(all ? ['-a'] : []),
      '--filter',
      `label=com.docker.compose.project=${project}`,
    ])
  ).stdout
    .split('\n')
    .filter(Boolean)

beforeAll(async () => {
  if (!compose) return
  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  env = {
    ...process.env,
    NODE_IMAGE: images().node,
    POSTGRES_IMAGE: images().postgres,
    POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
    PREFLIGHT_ORCHESTRATOR_TOKEN: TOKENS.orchestrator,
    PREFLIGHT_WORKER_TOKEN: TOKENS.worker,
    PREFLIGHT_OPERATOR_TOKEN: TOKENS.operator,
    PREFLIGHT_PORT: String(port),
  }
})

afterAll(async () => {
  await git?.stop().catch(() => {})
  if (compose && (await containersOf()).length)
    await composeRun('down', '-v', '--remove-orphans').catch(() => {})
})

describe.runIf(compose)(`compose.yaml, with ${compose?.join(' ') ?? 'no compose command'}`, () => {
  it('comes up with two workers and runs a dispatch to success', async () => {
    await composeRun('up', '-d', '--build', '--scale', 'worker=2')
    expect(await containersOf(false)).toHaveLength(4) // postgres, coordinator, two workers; migrate exited
    git = await startGitServer(`${project}_default`, { 'package.json': '{}\n' })
    await waitFor(async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000, everyMs: 100 })
    await register(url, {
      name: 'compose-met',
      agent: { command: ['sh', '-c', 'test "$(id -u)" -ge 100000'] },
      contextRequires: { paths: ['package.json'], exec: ['git'], git: { worktree: true, history: true } },
    })
    const id = await dispatch(url, 'compose-met', { repo: 'git://git/app' })
    const done = await settled({ url, containers: [git] }, id)
    expect(done).toMatchObject({ status: 'succeeded', completion: { exitCode: 0 } })
  })

  it('goes down with -v, leaving no container and no volume', async () => {
    await git?.stop()
    git = undefined
    await composeRun('down', '-v')
    expect(await containersOf()).toEqual([])
    const volumes = await run('docker', [
      'volume',
      'ls',
      '-q',
      '--filter',
      `label=com.docker.compose.project=${project}`,
    ])
    expect(volumes.stdout.trim()).toBe('')
  })
})

// .ci/run installs docker-compose: without either Compose the run fails here rather than skip in silence.
if (!compose) {
  describe('compose.yaml', () => {
    it('needs `docker compose` or docker-compose', () => {
      expect.fail('neither `docker compose` nor docker-compose answers here')
    })
  })
}
