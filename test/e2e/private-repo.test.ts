// End to end: a worker as root with --agent-uid clones a private repository over HTTP basic auth with
// --git-credentials, and the agent, hunting for that password, finds it nowhere.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  agentOutbox,
  dispatch,
  e2eSuite,
  type Proc,
  register,
  serveCoordinator,
  spawnWorker,
  waitForStatus,
} from '../support/e2e.js'
import { bareRepos, type GitServer, startHttpGitServer } from '../support/git-servers.js'

const PASSWORD = 'e2e-clone-password-5f2c9a'
const isRoot = process.getuid?.() === 0

const suite = e2eSuite()
let coordinator: { url: string }
let worker: Proc
let server: GitServer
let served: string
let outbox: string

beforeAll(async () => {
  if (!isRoot) return
  served = await bareRepos('private', { 'package.json': '{}\n' })
  server = await startHttpGitServer(served, { user: 'ci', password: PASSWORD })
  outbox = await agentOutbox(suite)
  // in a directory the agents may search, readable by its owner only
  const secrets = join(suite.scratch, 'secrets')
  await mkdir(secrets, { mode: 0o755 })
  const credentials = join(secrets, 'git-credentials')
  await writeFile(credentials, `http://ci:${PASSWORD}@${new URL(server.url).host}\n`, { mode: 0o600 })
  coordinator = await serveCoordinator(suite)
  worker = spawnWorker(coordinator.url, {
    workdir: join(suite.scratch, 'work'),
    allowLocalRepos: false,
    args: ['--agent-uid', '61300', '--git-credentials', credentials],
  })
})

afterAll(async () => {
  await server?.close()
  if (served) await rm(served, { recursive: true, force: true })
})

describe.runIf(isRoot)('a private repository under --agent-uid', () => {
  it('clones with credentials the agent cannot read', async () => {
    const hunt = [
      'out=$0/hunt',
      `cat ${suite.scratch}/secrets/git-credentials >> $out 2>&1 || echo credentials: refused >> $out`,
      'env >> $out; cat .git/config >> $out; git config --list >> $out 2>&1',
      'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f 2>/dev/null | tr "\\0" "\\n"; done >> $out',
      'grep -rs "" "$HOME" >> $out; cat package.json >> $out',
    ].join('\n')
    await register(coordinator.url, {
      name: 'private-hunt',
      agent: { command: ['sh', '-c', hunt, outbox] },
      contextRequires: { paths: ['package.json'] },
    })
    const id = await dispatch(coordinator.url, 'private-hunt', { repo: `${server.url}/private.git` })
    const done = await waitForStatus(coordinator.url, id, 60_000, [worker])
    expect(done.status).toBe('succeeded')
    const seen = await readFile(join(outbox, 'hunt'), 'utf8')
    expect(seen).toContain('credentials: refused')
    expect(seen).toContain('{}')
    expect(seen).not.toContain(PASSWORD)
  }, 90_000)
})
