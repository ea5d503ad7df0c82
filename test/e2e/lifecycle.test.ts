// End to end: a real coordinator process on a fresh database, a real worker process, real git repositories.
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  call,
  dispatch,
  e2eSuite,
  fakeAgent,
  type Proc,
  register,
  serveCoordinator,
  spawnWorker,
  stepsOf,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'
import { git, makeRepo as makeRepoIn, removeAll, tempDir } from '../support/git-fixtures.js'
import { waitFor } from '../support/wait.js'

// suite.repo is another repository: the worker's own environment points git at it (GIT_DIR), and
// nothing of that may reach a check.
const suite = e2eSuite({ 'other.txt': 'not the workspace\n' })
let coordinator: { url: string }
let worker: Proc
let root: string

beforeAll(async () => {
  root = join(suite.scratch, 'root')
  await mkdir(root)
  coordinator = await serveCoordinator(suite)
  worker = spawnWorker(coordinator.url, {
    workdir: join(suite.scratch, 'work'),
    roots: [root],
    env: { GIT_DIR: join(suite.repo, '.git'), E2E_PASSED: 'passed', E2E_SECRET: 'leaked' },
    args: ['--pass-env', 'E2E_PASSED'],
  })
})

// the tests' own repositories, removed with the suite
const repos: string[] = []
afterAll(() => removeAll(repos))
const makeRepo = async (files?: Record<string, string>) => {
  const repo = await makeRepoIn(files)
  repos.push(repo)
  return repo
}

const wait = (id: string) => waitForStatus(coordinator.url, id, 30_000, [worker])

async function subagent(name: string, contextRequires: Record<string, unknown>, sleepSeconds = 0) {
  const marker = join(suite.scratch, `${name}.marker`)
  await register(coordinator.url, {
    name,
    agent: { command: fakeAgent(marker, sleepSeconds) },
    contextRequires,
  })
  return marker
}

describe('a dispatch end to end', () => {
  it('runs the agent after a met preflight and records succeeded, the report and the events', async () => {
    const repo = await makeRepo({ 'package.json': '{}\n', 'src/a.ts': 'export {}\n' })
    const marker = await subagent('e2e-met', {
      paths: ['package.json', 'src/**/*.ts'],
      exec: ['sh', 'git'],
      git: { worktree: true, history: true },
    })
    const d = await wait(await dispatch(coordinator.url, 'e2e-met', { repo }))
    expect(d.status).toBe('succeeded')
    expect(existsSync(marker)).toBe(true)
    expect(d.preflight?.outcome).toBe('met')
    expect(d.completion).toMatchObject({ exitCode: 0, baseline: { head: git(repo, 'rev-parse', 'HEAD') } })
    expect(stepsOf(d).filter((s) => WORKER_STEPS.includes(s))).toEqual(WORKER_STEPS)
    const reports = await call<{ items: { dispatchId: string }[] }>(
      coordinator.url,
      'GET',
      '/v1/reports?subagent=e2e-met',
      TOKENS.operator,
    )
    expect(reports.items.map((r) => r.dispatchId)).toEqual([d.id])
  })

  it('fails the preflight for a missing binary, never starts the agent, and names the binary and PATH', async () => {
    const repo = await makeRepo()
    const marker = await subagent('e2e-missing', { exec: ['git', 'preflight-e2e-missing-tool'] })
    const d = await wait(await dispatch(coordinator.url, 'e2e-missing', { repo }))
    expect(d.status).toBe('preflight_failed')
    expect(existsSync(marker)).toBe(false)
    expect(stepsOf(d)).not.toContain('agent')
    const missing = d.preflight?.results.find((r) => r.requirement === 'preflight-e2e-missing-tool')
    expect(missing).toMatchObject({
      kind: 'exec',
      status: 'unmet',
      observed: { name: 'preflight-e2e-missing-tool' },
    })
    const searched = (missing?.observed as { searched?: string[] } | undefined)?.searched
    expect(searched).toEqual([...new Set((process.env.PATH ?? '').split(':').filter(Boolean))])
  })

  it('verifies after setup and before the baseline and the agent', async () => {
    const ws = join(root, 'order')
    await mkdir(ws)
    await writeFile(join(ws, 'preflight-setup.sh'), 'git init -q . && mkdir -p gen && echo x > gen/out.txt\n')
    const marker = await subagent('e2e-order', { paths: ['gen/**'], git: { worktree: true } })
    const d = await wait(await dispatch(coordinator.url, 'e2e-order', { path: ws }))
    expect(d.preflight?.results.map((r) => r.status)).toEqual(['met', 'met'])
    expect(d.status).toBe('succeeded')
    expect(existsSync(marker)).toBe(true)
    const steps = stepsOf(d)
    const at = (step: string) => steps.indexOf(step)
    expect(at('setup')).toBeGreaterThanOrEqual(0)
    expect([at('setup') < at('verify'), at('verify') < at('baseline'), at('baseline') < at('agent')]).toEqual(
      [true, true, true],
    )
    // a workspace.path is the operator's directory: the worker never removes it, unlike its clones
    const about = () => worker.records().filter((r) => r.dispatchId === d.id)
    await waitFor(async () => about().some((r) => r.msg === 'dispatch ended'), {
      timeoutMs: 10_000,
      everyMs: 100,
      what: worker.output,
    })
    expect(existsSync(join(ws, 'gen', 'out.txt'))).toBe(true)
    // the worker's every record about the dispatch says which attempt and step it is about
    expect(about().map((r) => r.msg)).toEqual(expect.arrayContaining(['claimed dispatch', 'dispatch ended']))
    for (const record of about()) expect(record).toMatchObject({ attempt: 1, step: expect.any(String) })
  })

  it('reports a failing setup as setup_failed with its output, not as a preflight failure', async () => {
    const repo = await makeRepo()
    const marker = await subagent('e2e-setup', { exec: ['sh'] })
    const setup = ['sh', '-c', 'echo broken-setup-output >&2; exit 3']
    const d = await wait(await dispatch(coordinator.url, 'e2e-setup', { repo, setup }))
    expect(d.status).toBe('setup_failed')
    expect(d.preflight).toBeUndefined()
    expect(d.completion).toMatchObject({ reason: 'setup-exit' })
    expect(d.completion?.detail).toContain('broken-setup-output')
    expect(existsSync(marker)).toBe(false)
  })

  it("keeps a failed agent's output, stdout and stderr, as its completion's detail", async () => {
    const repo = await makeRepo()
    await register(coordinator.url, {
      name: 'e2e-agent-fails',
      agent: { command: ['sh', '-c', 'echo building-the-thing; echo panic: no config >&2; exit 3'] },
    })
    const d = await wait(await dispatch(coordinator.url, 'e2e-agent-fails', { repo }))
    expect(d.status).toBe('failed')
    expect(d.completion).toMatchObject({ exitCode: 3, detail: expect.any(String) })
    // two pipes: their lines arrive in either order
    expect(d.completion?.detail?.split('\n').sort()).toEqual(['building-the-thing', 'panic: no config'])
  })

  it('refuses a workspace.path outside every --workspace-root as setup_failed path-not-allowed', async () => {
    const outside = await tempDir()
    const marker = await subagent('e2e-outside', {})
    const d = await wait(await dispatch(coordinator.url, 'e2e-outside', { path: outside }))
    await rm(outside, { recursive: true, force: true })
    expect(d.status).toBe('setup_failed')
    expect(d.completion).toMatchObject({ reason: 'path-not-allowed' })
    expect(existsSync(marker)).toBe(false)
  })

  it('does not find a worktree in a non-git workspace although the worker has GIT_DIR set', async () => {
    const ws = join(root, 'plain')
    await mkdir(ws)
    await subagent('e2e-git-dir', { git: { worktree: true } })
    const d = await wait(await dispatch(coordinator.url, 'e2e-git-dir', { path: ws }))
    expect(d.status).toBe('preflight_failed')
    expect(d.preflight?.results[0]).toMatchObject({ requirement: 'worktree', status: 'unmet' })
  })
})

const WORKER_STEPS = ['prepare', 'setup', 'verify', 'report', 'baseline', 'agent']

describe('the agent environment', () => {
  it('holds the allowlist, --pass-env names and agent.env, and nothing else of the worker', async () => {
    const repo = await makeRepo()
    const out = join(suite.scratch, 'agent-env.txt')
    const script = `echo "$E2E_PASSED|\${E2E_SECRET:-unset}|\${GIT_DIR:-unset}|$FROM_DEFINITION" > ${JSON.stringify(out)}`
    await register(coordinator.url, {
      name: 'e2e-env',
      agent: { command: ['sh', '-c', script], env: { FROM_DEFINITION: 'defined' } },
    })
    const d = await wait(await dispatch(coordinator.url, 'e2e-env', { repo }))
    expect(d.status).toBe('succeeded')
    expect((await readFile(out, 'utf8')).trim()).toBe('passed|unset|unset|defined')
  })
})
