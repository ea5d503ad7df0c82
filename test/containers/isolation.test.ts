// The agent-isolation checks inside the worker image, run exactly as compose.yaml runs it: root, every
// capability dropped but six, no-new-privileges, agents as uid 100000 + slot. The agents are attackers
// here; what they saw they write to /outbox/in, a host directory every uid may write.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { StartedTestContainer } from 'testcontainers'
import { beforeAll, describe, expect, it } from 'vitest'
import { containerStack, outputOf, settled, spawnWorker, WORKER_CONFINEMENT } from '../support/containers.js'
import { client, dispatch, register, TOKENS } from '../support/e2e.js'
import { waitFor } from '../support/wait.js'

const BASE = 100_000
const stack = containerStack()
let worker: StartedTestContainer

beforeAll(async () => {
  worker = await spawnWorker(stack, { args: ['--concurrency', '2'] })
})

const read = (name: string) => readFile(join(stack.outbox, name), 'utf8').catch(() => '')

async function run(name: string, script: string, setup?: string) {
  await register(stack.url, { name, agent: { command: ['sh', '-c', script] } })
  const workspace = { repo: stack.repo, ...(setup ? { setup: ['sh', '-c', setup] } : {}) }
  return settled(stack, await dispatch(stack.url, name, workspace))
}

// /proc/<pid>/status: a capability set as the names of its bits
const CAPS = ['CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID']
function capsIn(status: string, set: string): string[] {
  const mask = BigInt(`0x${new RegExp(`^${set}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? 'x'}`)
  const named = CAPS.filter((_, bit) => mask & (1n << BigInt(bit)))
  return mask >> BigInt(CAPS.length) === 0n ? named : [...named, 'others']
}

describe('the worker image with only the capabilities compose.yaml keeps', () => {
  it('is confined as compose.yaml declares: six capabilities, no new privileges', async () => {
    expect(WORKER_CONFINEMENT).toEqual({
      capDrop: ['ALL'],
      capAdd: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETUID', 'SETGID'],
      securityOpt: ['no-new-privileges:true'],
    })
    const status = (await worker.exec(['cat', '/proc/1/status'])).output
    expect(capsIn(status, 'CapBnd').sort()).toEqual([...WORKER_CONFINEMENT.capAdd].sort())
    expect(status).toMatch(/^NoNewPrivs:\s*1$/m)
  })

  it('runs setup and the agent as uid 100000 + slot, without groups or capabilities', async () => {
    const done = await run(
      'iso-ids',
      'echo "$(id -u) $(id -G)" > /outbox/in/agent-ids; grep CapEff /proc/self/status > /outbox/in/agent-caps',
      'id -u > /outbox/in/setup-uid',
    )
    expect(done.status).toBe('succeeded')
    const [uid, ...groups] = (await read('agent-ids')).trim().split(' ')
    expect([String(BASE), String(BASE + 1)]).toContain(uid)
    expect(groups).toEqual([uid])
    expect((await read('setup-uid')).trim()).toBe(uid)
    expect(capsIn(await read('agent-caps'), 'CapEff')).toEqual([])
  })

  it('keeps the worker token from the agent: environment, /proc/*/environ, HOME, the workdir', async () => {
    const hunt = [
      'out=/outbox/in/hunt; env > $out',
      'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f 2>/dev/null | tr "\\0" "\\n"; done >> $out',
      'grep -rs "" "$HOME" "$TMPDIR" >> $out',
      'ls -la /work >> $out 2>&1 || echo "workdir: not listable" >> $out',
    ].join('\n')
    expect((await run('iso-hunt', hunt)).status).toBe('succeeded')
    const seen = await read('hunt')
    expect(seen).toContain('workdir: not listable')
    expect(seen).not.toContain(TOKENS.worker)
    // nor is it in any process's environment for root: the entrypoint moved it to a file before tini
    // (read with an empty environment: `docker exec` gives its process the container's, token and all)
    const environs = await worker.exec(['env', '-i', '/bin/sh', '-c', '/bin/cat /proc/[0-9]*/environ'])
    expect(environs.output).toContain('PREFLIGHT_WORKDIR=/work')
    expect(environs.output).not.toContain(TOKENS.worker)
  })

  it('leaves no process behind: one started with setsid is gone once its dispatch ended', async () => {
    const script = "setsid sh -c 'echo $$ > /outbox/in/escaped; exec sleep 60' & sleep 0.5"
    expect((await run('iso-setsid', script)).status).toBe('succeeded')
    const pid = Number(await read('escaped'))
    expect(pid).toBeGreaterThan(1)
    const gone = async () => (await worker.exec(['test', '-e', `/proc/${pid}`])).exitCode !== 0
    await waitFor(gone, { timeoutMs: 10_000, everyMs: 100, what: () => outputOf(worker) })
  })

  // root may not remove another uid's System V IPC objects without CAP_SYS_ADMIN, which compose drops
  it('leaves nothing of an agent behind under these capabilities: IPC objects, /tmp, a tree past PATH_MAX', async () => {
    const script = [
      'ipcmk -M 65536 && ipcmk -Q && ipcmk -S 1',
      'echo left > /tmp/preflight-left',
      `perl -e 'for (1..2500) { mkdir "d" or die; chdir "d" or die }'`,
      'echo "$PWD" > /outbox/in/deep-ws',
    ].join(' && ')
    expect((await run('iso-leftovers', script)).status).toBe('succeeded')
    const workspace = (await read('deep-ws')).trim()
    expect(workspace).toMatch(/^\/work\//)
    const left = async () => {
      const ipc = await worker.exec(['sh', '-c', `cat /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem`])
      const uids = ipc.output.split('\n').filter((row) => / 10000[01] /.test(row))
      const files = await worker.exec(['sh', '-c', `ls -d /tmp/preflight-left ${workspace} 2>/dev/null`])
      return uids.length === 0 && files.output.trim() === ''
    }
    await waitFor(left, { timeoutMs: 20_000, everyMs: 100, what: () => outputOf(worker) })
  })
})

// --observe in the image: its preflight-trace (dist/), run as the worker under the same six capabilities
// and no-new-privileges — no ptrace, no CAP_SYS_PTRACE — traces the agent as its slot uid. A worker of its own, with a label only the
// dispatch below asks for, so the worker above never claims it.
describe('the worker image observing (--observe) under those capabilities', () => {
  let observer: StartedTestContainer
  beforeAll(async () => {
    observer = await spawnWorker(stack, { args: ['--observe', '--label', 'observe=yes'] })
  })

  it('traces the agent and fails it for the program it ran that no requirement declares', async () => {
    await register(stack.url, {
      name: 'iso-observe',
      agent: { command: ['sh', '-c', 'id -u; pnpm install'] },
    })
    const { id } = await client(stack.url, TOKENS.orchestrator).createDispatch({
      subagent: 'iso-observe',
      workspace: { repo: stack.repo },
      labels: ['observe=yes'],
    })
    const done = await settled(stack, id)
    expect(done.status, outputOf(observer)).toBe('failed')
    expect(done.completion).toMatchObject({ exitCode: 127, reason: 'undeclared-requirement' })
    expect(done.completion?.observed?.source).toBe('trace')
    expect(done.completion?.undeclared).toContainEqual(
      expect.objectContaining({ kind: 'exec', name: 'pnpm', state: 'missing' }),
    )
    expect(done.completion?.detail).toMatch(/^10000[01]$/m)
    // the tracer it picked, in its start line: the seccomp one, not the strace fallback
    expect(outputOf(observer)).toContain('"observe":"/app/dist/preflight-trace"')
  })
})
