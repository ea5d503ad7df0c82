// The worker image against the coordinator image, cloning from a git server in a third container: the
// dispatch outcomes as an orchestrator sees them, each with the container the agent ran in as witness.
import { existsSync } from 'node:fs'
import { chmod, chown, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { containerStack, settled, spawnWorker } from '../support/containers.js'
import { dispatch, register, stepsOf } from '../support/e2e.js'
import { git, tempDir } from '../support/git-fixtures.js'

const stack = containerStack({ 'package.json': '{}\n', 'src/index.ts': 'export {}\n' })
// a repository on the host, bind-mounted into the worker, owned by a uid that is neither the
// worker's (root) nor an agent's
const OWNER = 4242
let mounted: string

beforeAll(async () => {
  mounted = await tempDir('preflight-mounted-')
  await chmod(mounted, 0o755)
  const repo = join(mounted, 'repo')
  await mkdir(repo)
  git(repo, 'init', '-q')
  await writeFile(join(repo, 'package.json'), '{}\n')
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'initial')
  // a directory only its owner may enter: the worker, as root, could; the agent cannot
  await mkdir(join(repo, 'private'), { mode: 0o700 })
  await writeFile(join(repo, 'private', 'key'), 'k\n')
  await chownTree(repo, OWNER)
  await spawnWorker(stack, {
    args: ['--concurrency', '2', '--workspace-root', '/srv/mounted'],
    binds: [{ source: mounted, target: '/srv/mounted' }],
  })
})

afterAll(async () => {
  if (mounted) await rm(mounted, { recursive: true, force: true })
})

async function chownTree(path: string, uid: number): Promise<void> {
  await chown(path, uid, uid)
  for (const e of await readdir(path, { withFileTypes: true })) {
    if (e.isDirectory()) await chownTree(join(path, e.name), uid)
    else await chown(join(path, e.name), uid, uid)
  }
}

const ranMarker = (name: string) => join(stack.outbox, name)
const agentWrites = (name: string) => ['sh', '-c', `id -u > /outbox/in/${name}`]

describe('the worker image, cloning from another container', () => {
  it('runs a met dispatch to success, with a baseline', async () => {
    await register(stack.url, {
      name: 'ct-met',
      agent: { command: agentWrites('ct-met') },
      contextRequires: {
        paths: ['package.json', 'src/**/*.ts'],
        exec: ['sh', 'git'],
        git: { worktree: true, history: true },
      },
    })
    const done = await settled(stack, await dispatch(stack.url, 'ct-met', { repo: stack.repo }))
    expect(done).toMatchObject({ status: 'succeeded', completion: { exitCode: 0 } })
    expect(done.preflight?.outcome).toBe('met')
    expect(done.completion?.baseline).toMatchObject({ head: expect.stringMatching(/^[0-9a-f]{40}$/) })
    expect(stepsOf(done)).toContain('agent')
    expect(Number(await readFile(ranMarker('ct-met'), 'utf8'))).toBeGreaterThanOrEqual(100_000)
  })

  it('fails an unmet dispatch as preflight_failed, and its agent never runs', async () => {
    await register(stack.url, {
      name: 'ct-unmet',
      agent: { command: agentWrites('ct-unmet') },
      contextRequires: { exec: ['sh', 'pnpm'] },
    })
    const done = await settled(stack, await dispatch(stack.url, 'ct-unmet', { repo: stack.repo }))
    expect(done.status).toBe('preflight_failed')
    expect(done.preflight?.results.map((r) => [r.requirement, r.status])).toEqual([
      ['sh', 'met'],
      ['pnpm', 'unmet'],
    ])
    expect(stepsOf(done)).not.toContain('agent')
    expect(existsSync(ranMarker('ct-unmet'))).toBe(false)
  })

  it('fails a dispatch whose setup fails as setup_failed', async () => {
    await register(stack.url, { name: 'ct-setup', agent: { command: agentWrites('ct-setup') } })
    const id = await dispatch(stack.url, 'ct-setup', { repo: stack.repo, setup: ['sh', '-c', 'exit 3'] })
    const done = await settled(stack, id)
    expect(done.status).toBe('setup_failed')
    expect(existsSync(ranMarker('ct-setup'))).toBe(false)
  })

  it('verifies a bind-mounted workspace owned by another uid for the agent: git met, what it cannot reach unmet', async () => {
    await register(stack.url, {
      name: 'ct-owned',
      agent: { command: agentWrites('ct-owned') },
      contextRequires: { paths: ['package.json', 'private/key'], git: { worktree: true, history: true } },
    })
    const done = await settled(stack, await dispatch(stack.url, 'ct-owned', { path: '/srv/mounted/repo' }))
    expect(done.status).toBe('preflight_failed')
    expect(done.preflight?.results.map((r) => [r.kind, r.requirement, r.status])).toEqual([
      ['paths', 'package.json', 'met'],
      ['paths', 'private/key', 'unmet'],
      ['git', 'worktree', 'met'],
      ['git', 'history', 'met'],
    ])
  })
})
