// The container tests' world: the project's images on a network of their own — the stand-in PostgreSQL,
// the coordinator, a git server the workers clone from — and workers run as compose.yaml runs them.
import { readFileSync } from 'node:fs'
import { chmod, mkdir, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import {
  GenericContainer,
  getContainerRuntimeClient,
  ImageName,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
  Wait,
  type WaitStrategy,
} from 'testcontainers'
import { afterAll, beforeAll, inject } from 'vitest'
import { type DispatchView, getDispatch, TERMINAL, TOKENS } from './e2e.js'
import { makeRepo, tempDir } from './git-fixtures.js'
import { waitFor } from './wait.js'

export const ROOT = resolve(import.meta.dirname, '..', '..')
export const images = () => inject('images')

// Every container here carries the run's label: run.sh removes what a crashed run left behind.
export const RUN_LABEL = { 'preflight-ci.run': process.env.PREFLIGHT_CI_RUN ?? 'local' }

// How compose.yaml confines the worker: the tests run every worker container exactly so.
export const WORKER_CONFINEMENT = confinementOf(readFileSync(resolve(ROOT, 'compose.yaml'), 'utf8'))

export function confinementOf(compose: string) {
  const list = (key: string) =>
    (new RegExp(`^ +${key}: \\[([^\\]]*)\\]`, 'm').exec(compose)?.[1] ?? '')
      .split(',')
      .map((s) => s.trim().replace(/^"|"$/g, ''))
      .filter(Boolean)
  return { capDrop: list('cap_drop'), capAdd: list('cap_add'), securityOpt: list('security_opt') }
}

// A container's output so far, kept for failure messages.
const outputs = new Map<string, () => string>()
export const outputOf = (c: StartedTestContainer) => outputs.get(c.getId())?.() ?? ''

// Starts `container` labelled, its output kept; `name` prefixes it in failure messages.
export async function start(name: string, container: GenericContainer): Promise<StartedTestContainer> {
  let out = ''
  const started = await container
    .withLabels(RUN_LABEL)
    .withLogConsumer((stream: Readable) =>
      stream.on('data', (chunk: Buffer | string) => {
        out = (out + chunk.toString()).slice(-32_000)
      }),
    )
    .start()
  outputs.set(started.getId(), () => `--- ${name}\n${out}`)
  return started
}

export interface Stack {
  network: StartedNetwork
  postgres: StartedTestContainer
  coordinator: StartedTestContainer
  git: StartedTestContainer
  // the coordinator as the test reaches it
  url: string
  // the repository the git server serves, as the workers reach it
  repo: string
  // a directory every uid may write, the workers' /outbox/in: one level below the mount point /outbox.
  // The worker removes an agent's entries from every world-writable directory it finds on its root
  // filesystem, a world-writable mount point among them (as a deployment's would be); it does not look
  // into other filesystems, so this directory below the mount point keeps what agents write.
  outbox: string
  // what the stack started, for `stop` and failure messages
  containers: StartedTestContainer[]
}

// One suite's network, PostgreSQL, coordinator (short leases) and git server, stopped after its tests
// together with every container the suite started through `track`.
export function containerStack(files: Record<string, string> = { 'package.json': '{}\n' }): Stack {
  const stack = { containers: [] } as unknown as Stack
  beforeAll(async () => {
    stack.network = await new Network().start()
    const mounted = await tempDir('preflight-outbox-')
    await chmod(mounted, 0o755)
    stack.outbox = join(mounted, 'in')
    await mkdir(stack.outbox)
    await chmod(stack.outbox, 0o1777)
    stack.postgres = track(stack, await startPostgres(stack.network))
    stack.coordinator = track(stack, await startCoordinator(stack.network))
    stack.url = urlOf(stack.coordinator)
    stack.git = track(stack, await startGitServer(stack.network.getName(), files))
    stack.repo = 'git://git/app'
  })
  afterAll(async () => {
    for (const c of stack.containers.reverse()) await c.stop().catch(() => {})
    await stack.network?.stop().catch(() => {})
    if (stack.outbox) await rm(dirname(stack.outbox), { recursive: true, force: true })
  })
  return stack
}

export function track(stack: Stack, c: StartedTestContainer): StartedTestContainer {
  stack.containers.push(c)
  return c
}

export const DB = { user: 'preflight', password: 'container-test-password', name: 'preflight' }
export const DATABASE_URL = `postgres://${DB.user}:${DB.password}@postgres:5432/${DB.name}`

export function startPostgres(network: StartedNetwork) {
  return start(
    'postgres',
    new GenericContainer(images().postgres)
      .withNetwork(network)
      .withNetworkAliases('postgres')
      .withEnvironment({ POSTGRES_USER: DB.user, POSTGRES_PASSWORD: DB.password, POSTGRES_DB: DB.name })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2)),
  )
}

export const BOOTSTRAP = Object.entries(TOKENS)
  .map(([role, token]) => `${role}:${token}`)
  .join(',')

// The coordinator image as compose.yaml runs it, with leases short enough for a killed worker's
// dispatch to come back within seconds. Ready once /readyz answers (the HEALTHCHECK takes longer).
export function startCoordinator(
  network: StartedNetwork,
  wait: WaitStrategy = Wait.forHttp('/readyz', 8080),
) {
  return start(
    'coordinator',
    new GenericContainer(images().coordinator)
      .withNetwork(network)
      .withNetworkAliases('coordinator')
      .withCommand(['coordinator', '--port', '8080', '--lease-ms', '3000', '--sweep-ms', '250'])
      .withEnvironment({ DATABASE_URL, PREFLIGHT_BOOTSTRAP_TOKENS: BOOTSTRAP })
      .withExposedPorts(8080)
      .withWaitStrategy(wait),
  )
}

export const urlOf = (c: StartedTestContainer) => `http://${c.getHost()}:${c.getMappedPort(8080)}`

// `git daemon` in the worker image (it has git) serving one repository holding `files` as git://git/app
// on the network named `network`: the workers clone a real remote.
export async function startGitServer(network: string, files: Record<string, string>) {
  const repo = await makeRepo(files)
  try {
    return await start(
      'git',
      new GenericContainer(images().worker)
        .withNetworkMode(network)
        .withNetworkAliases('git')
        .withCopyDirectoriesToContainer([{ source: repo, target: '/srv/git/app' }])
        .withEntrypoint(['git'])
        .withCommand([
          'daemon',
          '--verbose',
          '--export-all',
          '--reuseaddr',
          '--base-path=/srv/git',
          '/srv/git',
        ])
        .withWaitStrategy(Wait.forLogMessage(/Ready to rumble/)),
    )
  } finally {
    await rm(repo, { recursive: true, force: true })
  }
}

export interface SpawnOptions {
  args?: string[]
  binds?: { source: string; target: string; mode?: 'ro' | 'rw' }[]
}

// The worker image as compose.yaml runs it: root, every capability dropped but the ones compose.yaml
// adds, no-new-privileges, agents as uid 100000 + slot; the stack's outbox at /outbox/in.
export async function spawnWorker(stack: Stack, opts: SpawnOptions = {}) {
  const { capDrop, capAdd, securityOpt } = WORKER_CONFINEMENT
  const command = ['worker', '--coordinator', 'http://coordinator:8080', '--workdir', '/work']
  command.push('--agent-uid', '100000', '--wait-ms', '1000', ...(opts.args ?? []))
  const container = new GenericContainer(images().worker)
    .withNetwork(stack.network)
    .withUser('root')
    .withDroppedCapabilities(...capDrop)
    .withAddedCapabilities(...capAdd)
    .withSecurityOpt(...securityOpt)
    .withCommand(command)
    .withEnvironment({ PREFLIGHT_TOKEN: TOKENS.worker })
    .withBindMounts([{ source: dirname(stack.outbox), target: '/outbox' }, ...(opts.binds ?? [])])
    .withWaitStrategy(Wait.forLogMessage(/worker \S+ started/))
  return track(stack, await start('worker', container))
}

// The container's state as the engine reports it (exit code, health).
export async function inspect(c: { getId(): string }) {
  const client = await getContainerRuntimeClient()
  return client.container.getById(c.getId()).inspect()
}

export async function kill(c: StartedTestContainer) {
  const client = await getContainerRuntimeClient()
  await client.container.getById(c.getId()).kill()
}

export async function imageFacts(image: string) {
  const client = await getContainerRuntimeClient()
  const info = await client.image.inspect(ImageName.fromString(image))
  return { sizeMB: Math.round(info.Size / 1e6), user: info.Config.User, healthcheck: info.Config.Healthcheck }
}

// Waits for the dispatch to end; on a timeout the message carries the dispatch and the containers' output.
export async function settled(
  at: { url: string; containers: StartedTestContainer[] },
  id: string,
  timeoutMs = 90_000,
): Promise<DispatchView> {
  let last: DispatchView | undefined
  await waitFor(
    async () => {
      last = await getDispatch(at.url, id)
      return TERMINAL.includes(last.status)
    },
    {
      timeoutMs: timeoutMs,
      everyMs: 100,
      what: () => `${JSON.stringify(last)}\n${at.containers.map(outputOf).join('\n')}`,
    },
  )
  return last as DispatchView
}
