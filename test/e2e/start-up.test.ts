// End to end: what a real worker process makes of what it was started with — the token in its
// environment, descriptors of whoever started it — before setup and agents run beside it.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  dispatch,
  e2eSuite,
  ending,
  register,
  serveCoordinator,
  spawnWorker,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'

const suite = e2eSuite()
let coordinator: { url: string }
const isRoot = process.getuid?.() === 0

beforeAll(async () => {
  coordinator = await serveCoordinator(suite)
})

// What /proc/<pid>/environ shows of a running process, one variable an entry.
const environOf = async (pid: number | undefined) =>
  (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0')

describe('the worker token', () => {
  it('is not in /proc/<worker pid>/environ once the worker runs, and the worker still authenticates with it', async () => {
    await register(coordinator.url, { name: 'e2e-environ', agent: { command: ['true'] } })
    const worker = spawnWorker(coordinator.url, { workdir: join(suite.scratch, 'environ') })
    // claimed, run and completed: the coordinator took the token the worker was started with
    const id = await dispatch(coordinator.url, 'e2e-environ', { repo: suite.repo })
    expect(ending(await waitForStatus(coordinator.url, id, 30_000, [worker]))).toMatchObject({
      status: 'succeeded',
    })
    const environ = await environOf(worker.child.pid)
    expect(environ.join('\n')).not.toContain(TOKENS.worker)
    // the control: this is the worker's environment as it was started, the name still there, emptied
    expect(environ).toContain(`PATH=${process.env.PATH}`)
    expect(environ).toContain('PREFLIGHT_TOKEN=')
    await worker.stop()
  }, 60_000)

  // A mount namespace with an empty tmpfs over /proc: nothing to write the environment through.
  it.runIf(isRoot)(
    'without /proc, stays where it was and the worker runs and says so',
    async () => {
      await register(coordinator.url, { name: 'e2e-no-proc', agent: { command: ['true'] } })
      const worker = spawnWorker(coordinator.url, {
        workdir: join(suite.scratch, 'no-proc'),
        wrapper: ['unshare', '-m', 'sh', '-c', 'mount -t tmpfs none /proc && exec "$0" "$@"'],
      })
      const id = await dispatch(coordinator.url, 'e2e-no-proc', { repo: suite.repo })
      expect(ending(await waitForStatus(coordinator.url, id, 30_000, [worker]))).toMatchObject({
        status: 'succeeded',
      })
      expect((await environOf(worker.child.pid)).join('\n')).toContain(TOKENS.worker)
      const warned = worker
        .records()
        .filter((r) => r.level === 'warn' && String(r.why).includes('/proc/self/stat'))
      expect(warned.length).toBeGreaterThanOrEqual(1)
      await worker.stop()
    },
    60_000,
  )
})

describe('descriptors the worker inherited', () => {
  // Node marks 0-15 close-on-exec at start and stops at the first gap after 15: fd 20 is past it.
  it('reach neither setup nor the agent: each is given 0, 1 and 2 only', async () => {
    const secret = join(suite.scratch, 'inherited-secret')
    await writeFile(secret, 'opened by what started the worker\n', { mode: 0o600 })
    // ls started by the worker itself, no shell between: its own descriptor is 3, the directory it lists
    const list = ['ls', '/proc/self/fd']
    await register(coordinator.url, { name: 'e2e-fds', agent: { command: list } })
    const worker = spawnWorker(coordinator.url, {
      workdir: join(suite.scratch, 'fds'),
      // bash: dash opens no descriptor above 9
      wrapper: ['bash', '-c', `exec 20<${JSON.stringify(secret)}; exec "$0" "$@"`],
    })
    const id = await dispatch(coordinator.url, 'e2e-fds', { repo: suite.repo, setup: list })
    expect(ending(await waitForStatus(coordinator.url, id, 30_000, [worker]))).toMatchObject({
      status: 'succeeded',
    })
    const seenIn = (step: string) =>
      worker
        .records()
        .filter((r) => r.output === true && r.dispatchId === id && r.step === step)
        .map((r) => r.msg)
    expect(seenIn('setup')).toEqual(['0', '1', '2', '3'])
    expect(seenIn('agent')).toEqual(['0', '1', '2', '3'])
    await worker.stop()
  }, 60_000)
})
