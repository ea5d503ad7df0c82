// The worker image run as deploy/kubernetes runs it, read from the rendered production overlay, not
// copied: the worker container's securityContext (root, every capability dropped but six, no privilege
// escalation — Docker's no-new-privileges), its arguments, the init container's command on a work
// directory made as the kubelet makes an emptyDir (0777), the token and clone credentials from files as
// the Secret volume gives them (root's, 0400). Under it, a dispatch runs and the agent is confined.
import { chmod, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Container, podsOf } from '../deploy/kubernetes-policy.js'
import { render } from '../deploy/kustomize.js'
import { containerStack, images, outputOf, settled, start, track } from '../support/containers.js'
import { dispatch, register, TOKENS } from '../support/e2e.js'
import { tempDir } from '../support/git-fixtures.js'
import { waitFor } from '../support/wait.js'

const OVERLAY = join(import.meta.dirname, '..', '..', 'deploy', 'kubernetes', 'overlays', 'production')
const pod = podsOf(render(OVERLAY)).find(
  (p) => p.owner.kind === 'Deployment' && p.owner.metadata.name === 'preflight-worker',
)
const spec = pod?.spec as NonNullable<typeof pod>['spec'] & {
  volumes: { name: string }[]
}
const worker = spec.containers.find((c) => c.name === 'worker') as Container
const init = spec.initContainers?.find((c) => c.name === 'workdir') as Container & { command: string[] }
const mountOf = (c: { volumeMounts?: { name: string; mountPath: string }[] }, name: string) =>
  c.volumeMounts?.find((m) => m.name === name)?.mountPath as string

// A container's securityContext as Docker takes it.
function confined(container: GenericContainer, c: Container): GenericContainer {
  const sc = c.securityContext ?? {}
  // Docker's ReadonlyRootfs, which testcontainers sets only through its host config
  const host = (container as unknown as { hostConfig: { ReadonlyRootfs?: boolean } }).hostConfig
  host.ReadonlyRootfs = sc.readOnlyRootFilesystem ?? false
  // the pod's RuntimeDefault profile is the engine's default one, which Docker applies unless told not to
  expect(spec.securityContext?.seccompProfile?.type).toBe('RuntimeDefault')
  return container
    .withUser(String(sc.runAsUser))
    .withDroppedCapabilities(...(sc.capabilities?.drop ?? []))
    .withAddedCapabilities(...(sc.capabilities?.add ?? []))
    .withSecurityOpt(...(sc.allowPrivilegeEscalation === false ? ['no-new-privileges:true'] : []))
}

const stack = containerStack()
let work: string
let secrets: string
let running: StartedTestContainer

beforeAll(async () => {
  // the emptyDir, as the kubelet makes it: root's, 0777
  work = await tempDir('preflight-k8s-work-')
  await chmod(work, 0o777)
  // the Secret's files: root's and 0400 (defaultMode 256)
  secrets = await tempDir('preflight-k8s-secrets-')
  await chmod(secrets, 0o755)
  await writeFile(join(secrets, 'token'), `${TOKENS.worker}\n`, { mode: 0o400 })
  await writeFile(join(secrets, 'git-credentials'), 'https://reader:read-token@git.invalid\n', {
    mode: 0o400,
  })
  const workMount = { source: work, target: mountOf(worker, 'work') }
  const initContainer = confined(new GenericContainer(images().worker), init)
    .withEntrypoint(init.command)
    .withBindMounts([{ ...workMount, target: mountOf(init as never, 'work') }])
    .withWaitStrategy(Wait.forOneShotStartup())
  track(stack, await start('init', initContainer))
  const args = (worker.args ?? []).map((a, i, all) =>
    all[i - 1] === '--coordinator' ? 'http://coordinator:8080' : a,
  )
  const container = confined(new GenericContainer(images().worker), worker)
    .withNetwork(stack.network)
    .withCommand(args)
    .withBindMounts([
      workMount,
      // each secret file alone, as subPath mounts it: in a directory the runtime makes, root's and 0755
      ...(worker.volumeMounts ?? [])
        .filter((m) => m.name === 'secrets')
        .map((m) => ({
          source: join(secrets, m.subPath as string),
          target: m.mountPath,
          mode: 'ro' as const,
        })),
      { source: dirname(stack.outbox), target: '/outbox' },
    ])
    .withWaitStrategy(Wait.forLogMessage(/worker \S+ started/))
  running = track(stack, await start('worker', container))
})

afterAll(async () => {
  await rm(work, { recursive: true, force: true })
  await rm(secrets, { recursive: true, force: true })
})

const outbox = (name: string) => readFile(join(stack.outbox, name), 'utf8').catch(() => '')

describe("the worker image under deploy/kubernetes's security context", () => {
  it('starts on the work directory the init container made 0711, and answers its readiness probe', async () => {
    expect((await stat(work)).mode & 0o7777).toBe(0o711)
    const port = worker.args?.[(worker.args?.indexOf('--metrics-port') ?? 0) + 1]
    const readyz = [
      'node',
      '-e',
      `fetch('http://127.0.0.1:${port}/readyz').then(r=>r.text()).then(console.log)`,
    ]
    await waitFor(async () => (await running.exec(readyz)).output.includes('"ready"'), {
      timeoutMs: 30_000,
      everyMs: 200,
      what: () => outputOf(running),
    })
    const status = (await running.exec(['cat', '/proc/1/status'])).output
    expect(status).toMatch(/^NoNewPrivs:\s*1$/m)
  })

  it('runs the agent as a slot uid without capabilities, where neither the token nor the credentials reach', async () => {
    const script = [
      'echo "$(id -u) $(id -G)" > /outbox/in/k8s-ids',
      'grep CapEff /proc/self/status > /outbox/in/k8s-caps',
      'out=/outbox/in/k8s-hunt; env > $out',
      'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f 2>/dev/null | tr "\\0" "\\n"; done >> $out',
      `cat /run/secrets/preflight/* >> $out 2>&1 || true`,
    ].join('\n')
    await register(stack.url, { name: 'k8s-iso', agent: { command: ['sh', '-c', script] } })
    const done = await settled(stack, await dispatch(stack.url, 'k8s-iso', { repo: stack.repo }))
    expect(done.status).toBe('succeeded')
    const [uid, ...groups] = (await outbox('k8s-ids')).trim().split(' ')
    expect(['100000', '100001']).toContain(uid)
    expect(groups).toEqual([uid])
    expect(await outbox('k8s-caps')).toMatch(/^CapEff:\s*0+$/m)
    const hunt = await outbox('k8s-hunt')
    expect(hunt).toContain('Permission denied')
    expect(hunt).not.toContain(TOKENS.worker)
    expect(hunt).not.toContain('read-token')
  })
})
