// End to end: the worker with exactly the capabilities its container keeps (compose.yaml drops all,
// then adds these six), started through setpriv as root.
import { chmod, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { dispatch, e2eSuite, register, serveCoordinator, spawnWorker, waitForStatus } from '../support/e2e.js'

const BASE = 61_100
const isRoot = process.getuid?.() === 0

const suite = e2eSuite({ 'package.json': '{}\n' })
let coordinator: { url: string }

beforeAll(async () => {
  if (!isRoot) return
  await chmod(suite.scratch, 0o711)
  coordinator = await serveCoordinator(suite)
})

describe.runIf(isRoot)('a worker with only the capabilities its container keeps', () => {
  const KEPT = ['chown', 'dac_override', 'fowner', 'kill', 'setuid', 'setgid']
  const only = (caps: string[]) => [
    'setpriv',
    '--bounding-set',
    `-all,${caps.map((c) => `+${c}`).join(',')}`,
    '--inh-caps',
    '-all',
  ]

  it('runs a whole dispatch with only the capabilities the container keeps', async () => {
    const work = join(suite.scratch, 'capped')
    const capped = spawnWorker(coordinator.url, {
      workdir: work,
      id: 'capped',
      wrapper: only(KEPT),
      args: ['--agent-uid', String(BASE), '--max-dispatches', '1'],
    })
    await register(coordinator.url, {
      name: 'iso-capped',
      // the workspace is wholly the agent's, the objects the baseline wrote included: it can commit
      agent: {
        command: [
          'sh',
          '-c',
          'test -z "$(find . ! -user "$(id -u)")" && echo changed > package.json && git -c user.name=a -c user.email=a@b commit -qam change',
        ],
      },
      contextRequires: { paths: ['package.json'], exec: ['sh'], git: { worktree: true, history: true } },
    })
    const id = await dispatch(coordinator.url, 'iso-capped', {
      repo: suite.repo,
      setup: ['sh', '-c', 'touch made-by-setup'],
    })
    expect(await capped.exited).toBe(0)
    const done = await waitForStatus(coordinator.url, id, 30_000, [capped])
    expect(done).toMatchObject({ status: 'succeeded', completion: { exitCode: 0 } })
    expect(done.preflight?.outcome).toBe('met')
    expect(await readdir(work)).toEqual([])
  }, 90_000)

  it('refuses to start, naming what is missing, without one of them', async () => {
    const lacking = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'lacking'),
      wrapper: only(KEPT.filter((c) => c !== 'setuid')),
      args: ['--agent-uid', String(BASE + 10)],
    })
    expect(await lacking.exited).toBe(2)
    expect(lacking.output()).toContain('CAP_SETUID')
  }, 30_000)
})
