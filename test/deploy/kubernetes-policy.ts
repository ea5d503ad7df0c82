// What a reviewer checks in deploy/kubernetes, as functions of the rendered objects: each returns the
// problems it finds, one line each ("Kind/namespace/name container: what"), none when the manifests hold.
import { parseDuration } from '../../src/cli/duration.js'
import { type K8sObject, keyOf } from './kustomize.js'

export interface Container {
  name: string
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[]
  image?: string
  args?: string[]
  env?: { name: string; value?: string; valueFrom?: unknown }[]
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> }
  livenessProbe?: unknown
  readinessProbe?: unknown
  securityContext?: {
    runAsUser?: number
    runAsNonRoot?: boolean
    allowPrivilegeEscalation?: boolean
    readOnlyRootFilesystem?: boolean
    capabilities?: { add?: string[]; drop?: string[] }
  }
}
export interface PodSpec {
  volumes?: { name: string; secret?: unknown }[]
  containers: Container[]
  initContainers?: Container[]
  enableServiceLinks?: boolean
  automountServiceAccountToken?: boolean
  terminationGracePeriodSeconds?: number
  securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type?: string } }
}
export interface Pod {
  owner: K8sObject
  spec: PodSpec
  // runs until stopped (Deployment, StatefulSet), not to completion (Job, ScaledJob)
  longLived: boolean
}

// The capabilities the worker adds, as compose.yaml's cap_add has them: what running setup and agents as
// uids of their own takes (docs/operations.md).
export const WORKER_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETUID', 'SETGID']
// What Pod Security `baseline` lets a container add; `restricted` lets it add NET_BIND_SERVICE alone.
const BASELINE_CAPABILITIES = new Set(
  ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE'].concat([
    'SETFCAP',
    'SETGID',
    'SETPCAP',
    'SETUID',
    'SYS_CHROOT',
  ]),
)
const LEVEL: Record<string, string> = { preflight: 'restricted', 'preflight-workers': 'baseline' }

export function podsOf(objects: K8sObject[]): Pod[] {
  return objects.flatMap((o): Pod[] => {
    // biome-ignore lint/suspicious/noExplicitAny: the shapes are the schemas', checked by kubernetes-schemas.ts
    const spec = o.spec as Record<string, any> | undefined
    if (o.kind === 'Deployment' || o.kind === 'StatefulSet')
      return [{ owner: o, spec: spec?.template.spec, longLived: true }]
    if (o.kind === 'Job') return [{ owner: o, spec: spec?.template.spec, longLived: false }]
    if (o.kind === 'ScaledJob')
      return [{ owner: o, spec: spec?.jobTargetRef.template.spec, longLived: false }]
    return []
  })
}

const containersOf = (pod: Pod) => [...(pod.spec.initContainers ?? []), ...pod.spec.containers]
const where = (pod: Pod, c?: Container) => `${keyOf(pod.owner)}${c ? ` ${c.name}` : ''}`
const isWorker = (pod: Pod, c: Container) =>
  pod.owner.metadata.namespace === 'preflight-workers' && c.name === 'worker'

export function resourceProblems(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) =>
    containersOf(pod).flatMap((c) => {
      const { requests = {}, limits = {} } = c.resources ?? {}
      const missing = [
        requests.cpu ? '' : 'requests.cpu',
        requests.memory ? '' : 'requests.memory',
        limits.memory ? '' : 'limits.memory',
      ].filter(Boolean)
      return missing.length > 0 ? [`${where(pod, c)}: no ${missing.join(', ')}`] : []
    }),
  )
}

export function probeProblems(objects: K8sObject[]): string[] {
  return podsOf(objects)
    .filter((pod) => pod.longLived)
    .flatMap((pod) =>
      pod.spec.containers.flatMap((c) => [
        ...(c.livenessProbe ? [] : [`${where(pod, c)}: no livenessProbe`]),
        ...(c.readinessProbe ? [] : [`${where(pod, c)}: no readinessProbe`]),
      ]),
    )
}

// By digest where `digest` (production), else by a tag other than latest.
export function imageProblems(objects: K8sObject[], { digest }: { digest: boolean }): string[] {
  return podsOf(objects).flatMap((pod) =>
    containersOf(pod).flatMap((c) => {
      const image = c.image ?? ''
      if (digest)
        return /@sha256:[0-9a-f]{64}$/.test(image)
          ? []
          : [`${where(pod, c)}: ${image} is not pinned by digest`]
      const tag = /^[^@]+:([^/:@]+)$/.exec(image)?.[1]
      return tag && tag !== 'latest' ? [] : [`${where(pod, c)}: ${image} has no tag of its own`]
    }),
  )
}

// Secrets come from Secret objects made outside the repository, never from the manifests' text.
const SECRET_NAME = /TOKEN|PASSWORD|SECRET|CREDENTIAL|DATABASE_URL/
const SECRET_TEXT = /\bpf_[a-z]+_|:\/\/[^/\s:@]+:[^/\s@]+@/
export function literalSecretProblems(objects: K8sObject[]): string[] {
  const objectsHolding = objects
    .filter((o) => (o.kind === 'Secret' || o.kind === 'ConfigMap') && (o.data || o.stringData))
    .map((o) => `${keyOf(o)}: a ${o.kind} with its data in the manifests`)
  const inText = objects
    .filter((o) => SECRET_TEXT.test(JSON.stringify(o)))
    .map((o) => `${keyOf(o)}: a token or a password in its text`)
  const inPods = podsOf(objects).flatMap((pod) =>
    containersOf(pod).flatMap((c) => [
      ...(c.env ?? [])
        .filter((e) => SECRET_NAME.test(e.name) && e.value !== undefined)
        .map((e) => `${where(pod, c)}: ${e.name} has a value, not a secretKeyRef`),
      ...((c.args ?? []).includes('--token') ? [`${where(pod, c)}: --token on the command line`] : []),
    ]),
  )
  return [...objectsHolding, ...inText, ...inPods]
}

// Every container drops every capability and cannot gain privileges; the worker alone runs as root and
// adds exactly the worker's capabilities; each pod keeps to its namespace's Pod Security level.
export function privilegeProblems(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) => {
    const level = LEVEL[pod.owner.metadata.namespace ?? '']
    const problems = level ? [] : [`${where(pod)}: in a namespace of no Pod Security level here`]
    if (pod.spec.securityContext?.seccompProfile?.type !== 'RuntimeDefault')
      problems.push(`${where(pod)}: no RuntimeDefault seccomp profile`)
    for (const c of containersOf(pod)) {
      const sc = c.securityContext ?? {}
      const add = sc.capabilities?.add ?? []
      if (!(sc.capabilities?.drop ?? []).includes('ALL')) problems.push(`${where(pod, c)}: does not drop ALL`)
      if (sc.allowPrivilegeEscalation !== false) problems.push(`${where(pod, c)}: may escalate privileges`)
      if (isWorker(pod, c)) {
        if ([...add].sort().join() !== [...WORKER_CAPABILITIES].sort().join())
          problems.push(
            `${where(pod, c)}: adds ${add.join(', ') || 'nothing'}, not ${WORKER_CAPABILITIES.join(', ')}`,
          )
      } else if (add.length > 0)
        problems.push(`${where(pod, c)}: adds ${add.join(', ')}, and is not the worker`)
      const nonRoot = sc.runAsNonRoot ?? pod.spec.securityContext?.runAsNonRoot
      if (level === 'restricted' && nonRoot !== true)
        problems.push(`${where(pod, c)}: may run as root under restricted`)
      if (level === 'restricted' && add.some((a) => a !== 'NET_BIND_SERVICE'))
        problems.push(`${where(pod, c)}: adds what restricted forbids`)
      if (level === 'baseline' && add.some((a) => !BASELINE_CAPABILITIES.has(a)))
        problems.push(`${where(pod, c)}: adds what baseline forbids`)
    }
    return problems
  })
}

// No pod is given a Service's address in its environment (PREFLIGHT_PORT=tcp://… from a Service named
// `preflight`) nor a Kubernetes API token an agent could use.
export function podEnvironmentProblems(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) => [
    ...(pod.spec.enableServiceLinks === false ? [] : [`${where(pod)}: service links on`]),
    ...(pod.spec.automountServiceAccountToken === false ? [] : [`${where(pod)}: an API token mounted`]),
  ])
}

// The kubelet's SIGKILL comes after the worker drained: --grace-ms, an agent's SIGTERM to SIGKILL (5 s),
// its output read (1 s) and the log's flush (3 s) (docs/worker.md, "Resilience").
export function gracePeriodProblems(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) =>
    pod.spec.containers
      .filter((c) => isWorker(pod, c))
      .flatMap((c) => {
        const args = c.args ?? []
        const flag = args.indexOf('--grace-ms')
        const graceMs = flag === -1 ? 30_000 : parseDuration(args[flag + 1] ?? '')
        if (graceMs === undefined) return [`${where(pod, c)}: --grace-ms ${args[flag + 1]} does not read`]
        const needed = Math.ceil(graceMs / 1000) + 5 + 1 + 3
        const given = pod.spec.terminationGracePeriodSeconds ?? 30
        return given >= needed ? [] : [`${where(pod, c)}: terminationGracePeriodSeconds ${given} < ${needed}`]
      }),
  )
}

// The files the worker is told to trust (--token-file, --git-credentials, --ssh-key, --ssh-known-hosts) are
// each mounted alone from a Secret (subPath): a Secret volume's own directory is a tmpfs of mode 1777,
// where the worker refuses them (an agent uid may write there), and a pod that mounted it whole would
// not start.
const SECRET_FLAGS = ['--token-file', '--git-credentials', '--ssh-key', '--ssh-known-hosts']
export function secretFileProblems(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) =>
    pod.spec.containers.flatMap((c) => {
      const secretVolumes = new Set((pod.spec.volumes ?? []).filter((v) => v.secret).map((v) => v.name))
      const args = c.args ?? []
      return SECRET_FLAGS.filter((flag) => args.includes(flag)).flatMap((flag) => {
        const file = args[args.indexOf(flag) + 1]
        const mount = (c.volumeMounts ?? []).find((m) => m.mountPath === file)
        if (mount && secretVolumes.has(mount.name) && mount.subPath) return []
        return [`${where(pod, c)}: ${flag} ${file} is not a file mounted alone (subPath) from a Secret`]
      })
    }),
  )
}
