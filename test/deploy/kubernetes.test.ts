// deploy/kubernetes, without a cluster: each overlay rendered (and, where kubectl is installed, rendered the
// same by `kubectl kustomize`), every object valid against pinned Kubernetes and KEDA schemas, and the
// checks a reviewer makes of a deployment — each of which a broken copy of the manifests turns red.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments, parse as parseYaml } from 'yaml'
import type { Orm } from '../../src/coordinator/db/client.js'
import { createMetrics } from '../../src/coordinator/http/metrics.js'
import {
  type Container,
  gracePeriodProblems,
  imageProblems,
  literalSecretProblems,
  podEnvironmentProblems,
  podsOf,
  privilegeProblems,
  probeProblems,
  resourceProblems,
  secretFileProblems,
  WORKER_CAPABILITIES,
} from './kubernetes-policy.js'
import { schemaProblems } from './kubernetes-schemas.js'
import { type K8sObject, keyOf, render } from './kustomize.js'

const ROOT = join(import.meta.dirname, '..', '..')
const DEPLOY = join(ROOT, 'deploy', 'kubernetes')
// by digest: the production overlays; dev runs images built on the machine, by tag
const OVERLAYS = { dev: { digest: false }, production: { digest: true }, 'production-jobs': { digest: true } }
const overlay = (name: string) => render(join(DEPLOY, 'overlays', name))

const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0

describe.each(Object.entries(OVERLAYS))('the %s overlay', (name, { digest }) => {
  const objects = overlay(name)

  it.runIf(kubectl)('renders as `kubectl kustomize` renders it', () => {
    const run = spawnSync('kubectl', ['kustomize', join(DEPLOY, 'overlays', name)], { encoding: 'utf8' })
    expect(run.stderr).toBe('')
    const theirs = new Map(parseAllDocuments(run.stdout).map((d) => [keyOf(d.toJS()), d.toJS()]))
    const ours = new Map(objects.map((o) => [keyOf(o), o]))
    expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort())
    for (const [key, o] of ours) expect(isDeepStrictEqual(o, theirs.get(key)), key).toBe(true)
  })

  it('holds only objects valid against the schemas of Kubernetes 1.36 and KEDA, with no unknown field', () => {
    expect(objects.flatMap(schemaProblems)).toEqual([])
  })

  it('gives every container resources, and every long-lived one liveness and readiness probes', () => {
    expect([...resourceProblems(objects), ...probeProblems(objects)]).toEqual([])
  })

  it(digest ? 'pins every image by digest' : 'names every image by a tag other than latest', () => {
    expect(imageProblems(objects, { digest })).toEqual([])
  })

  it('puts no token, password or credential in a literal', () => {
    expect(literalSecretProblems(objects)).toEqual([])
  })

  it('mounts each secret file the worker reads alone, from a Secret, where no agent uid may write', () => {
    expect(secretFileProblems(objects)).toEqual([])
  })

  it('adds capabilities to the worker alone, only the six isolation takes, within each Pod Security level', () => {
    expect(privilegeProblems(objects)).toEqual([])
  })

  it('turns service links and API tokens off in every pod', () => {
    expect(podEnvironmentProblems(objects)).toEqual([])
  })

  it("gives the worker's pod a grace period that covers its drain", () => {
    expect(gracePeriodProblems(objects)).toEqual([])
  })

  it('enforces restricted for the coordinator and baseline for the workers, and lets nothing reach a worker', () => {
    const levels = objects
      .filter((o) => o.kind === 'Namespace')
      .map((o) => [o.metadata.name, o.metadata.labels?.['pod-security.kubernetes.io/enforce']])
    expect(Object.fromEntries(levels)).toEqual({ preflight: 'restricted', 'preflight-workers': 'baseline' })
    const denyAll = objects.find(
      (o) =>
        o.kind === 'NetworkPolicy' &&
        o.metadata.namespace === 'preflight-workers' &&
        isDeepStrictEqual(o.spec, { podSelector: {}, policyTypes: ['Ingress'] }),
    )
    expect(denyAll, 'a NetworkPolicy of preflight-workers that allows no ingress to any pod').toBeDefined()
  })

  it('runs the coordinator on a read-only root filesystem', () => {
    const coordinator = containersNamed(objects, 'coordinator')
    expect(coordinator.length).toBeGreaterThan(0)
    expect(coordinator.map((c) => c.securityContext?.readOnlyRootFilesystem)).toEqual(
      coordinator.map(() => true),
    )
  })

  it("points the worker's probes at its --metrics-port, served on the pod's address", () => {
    for (const pod of podsOf(objects)) {
      for (const c of pod.spec.containers.filter((c) => c.name === 'worker')) {
        const args = c.args ?? []
        const port = (c as { ports?: { name: string; containerPort: number }[] }).ports?.find(
          (p) => p.name === 'probes',
        )
        expect(args[args.indexOf('--metrics-port') + 1]).toBe(String(port?.containerPort))
        expect(args[args.indexOf('--metrics-host') + 1]).toBe('0.0.0.0')
      }
    }
  })

  it('scales workers on a gauge the coordinator serves, read from its Service', () => {
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'preflight')
    const port = (service?.spec as { ports: { port: number }[] } | undefined)?.ports[0]?.port
    const registry = createMetrics({} as Orm, { processMetrics: false }).registry
    const triggers = objects
      .filter((o) => o.kind === 'ScaledObject' || o.kind === 'ScaledJob')
      .flatMap((o) => (o.spec as { triggers: { metadata: Record<string, string> }[] }).triggers)
    expect(triggers.length).toBe(1)
    for (const { metadata } of triggers) {
      expect(metadata.url).toBe(`http://preflight.${service?.metadata.namespace}.svc:${port}/metrics`)
      const gauge = /^(\w+)\{labels=""\}$/.exec(metadata.valueLocation ?? '')?.[1] ?? ''
      expect(registry.getSingleMetric(gauge), metadata.valueLocation).toBeDefined()
    }
  })
})

describe('deploy/kubernetes and the rest of the project', () => {
  it('adds the worker the capabilities compose.yaml adds, which the container tests run the image with', () => {
    const compose = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'))
    expect([...compose.services.worker.cap_add].sort()).toEqual([...WORKER_CAPABILITIES].sort())
  })

  it("runs the ScaledJob's worker as the Deployment's, one dispatch per pod, ending when idle", () => {
    const deployment = podsOf(overlay('production')).find(
      (p) => p.owner.kind === 'Deployment' && p.owner.metadata.name === 'preflight-worker',
    )
    const job = podsOf(overlay('production-jobs')).find((p) => p.owner.kind === 'ScaledJob')
    const worker = (pod = deployment) => pod?.spec.containers.find((c) => c.name === 'worker')
    expect(job?.spec.securityContext).toEqual(deployment?.spec.securityContext)
    expect(job?.spec.initContainers).toEqual(deployment?.spec.initContainers)
    expect(worker(job)?.securityContext).toEqual(worker(deployment)?.securityContext)
    expect(worker(job)?.args).toEqual(expect.arrayContaining(['--max-dispatches', '1', '--exit-when-idle']))
    const args = worker(job)?.args ?? []
    expect(args[args.indexOf('--concurrency') + 1]).toBe('1')
  })
})

// Each check, on the production manifests broken one way: red, naming what broke.
describe('the checks catch a broken manifest', () => {
  const broken = (change: (objects: K8sObject[]) => void) => {
    const objects = overlay('production')
    change(objects)
    return objects
  }
  const pod = (objects: K8sObject[], name: string) =>
    podsOf(objects).find((p) => p.owner.metadata.name === name)?.spec as NonNullable<
      ReturnType<typeof podsOf>[0]
    >['spec']

  it('a container without a memory limit', () => {
    const objects = broken((o) => {
      delete pod(o, 'preflight-coordinator').containers[0]?.resources?.limits?.memory
    })
    expect(resourceProblems(objects)).toEqual([
      'Deployment/preflight/preflight-coordinator coordinator: no limits.memory',
    ])
  })

  it('a long-lived container without a readiness probe', () => {
    const objects = broken((o) => {
      delete pod(o, 'preflight-worker').containers[0]?.readinessProbe
    })
    expect(probeProblems(objects)).toEqual([
      'Deployment/preflight-workers/preflight-worker worker: no readinessProbe',
    ])
  })

  it('an image by tag', () => {
    const objects = broken((o) => {
      const c = pod(o, 'preflight-coordinator').containers[0] as Container
      c.image = 'registry.invalid/preflight/coordinator:1.0'
    })
    expect(imageProblems(objects, { digest: true })).toEqual([
      'Deployment/preflight/preflight-coordinator coordinator: registry.invalid/preflight/coordinator:1.0 is not pinned by digest',
    ])
    expect(imageProblems([], { digest: false })).toEqual([])
  })

  it('a token in a literal, and one on the command line', () => {
    const objects = broken((o) => {
      const c = pod(o, 'preflight-coordinator').containers[0] as Container
      c.env = [
        ...(c.env ?? []).filter((e) => e.name !== 'PREFLIGHT_METRICS_TOKEN'),
        { name: 'PREFLIGHT_METRICS_TOKEN', value: 'x'.repeat(32) },
      ]
      pod(o, 'preflight-worker').containers[0]?.args?.push('--token', 'pf_worker_abc')
    })
    expect(literalSecretProblems(objects)).toEqual([
      'Deployment/preflight-workers/preflight-worker: a token or a password in its text',
      'Deployment/preflight/preflight-coordinator coordinator: PREFLIGHT_METRICS_TOKEN has a value, not a secretKeyRef',
      'Deployment/preflight-workers/preflight-worker worker: --token on the command line',
    ])
  })

  it('a capability added to the worker, and one to the coordinator', () => {
    const objects = broken((o) => {
      pod(o, 'preflight-worker').containers[0]?.securityContext?.capabilities?.add?.push('SYS_ADMIN')
      const coordinator = pod(o, 'preflight-coordinator').containers[0]?.securityContext
      if (coordinator?.capabilities) coordinator.capabilities.add = ['NET_RAW']
    })
    expect(privilegeProblems(objects)).toEqual([
      'Deployment/preflight/preflight-coordinator coordinator: adds NET_RAW, and is not the worker',
      'Deployment/preflight/preflight-coordinator coordinator: adds what restricted forbids',
      `Deployment/preflight-workers/preflight-worker worker: adds ${[...WORKER_CAPABILITIES, 'SYS_ADMIN'].join(', ')}, not ${WORKER_CAPABILITIES.join(', ')}`,
      'Deployment/preflight-workers/preflight-worker worker: adds what baseline forbids',
    ])
  })

  it('a coordinator that may run as root', () => {
    const objects = broken((o) => {
      const spec = pod(o, 'preflight-coordinator')
      delete spec.securityContext?.runAsNonRoot
    })
    expect(privilegeProblems(objects)).toEqual([
      'Deployment/preflight/preflight-coordinator coordinator: may run as root under restricted',
    ])
  })

  it('a Secret volume mounted whole, its token file in the tmpfs directory every uid may write', () => {
    const objects = broken((o) => {
      const c = pod(o, 'preflight-worker').containers[0] as Container
      c.volumeMounts = (c.volumeMounts ?? []).map((m) =>
        m.mountPath === '/run/secrets/preflight/token'
          ? { name: m.name, mountPath: '/run/secrets/preflight' }
          : m,
      )
    })
    expect(secretFileProblems(objects)).toEqual([
      'Deployment/preflight-workers/preflight-worker worker: --token-file /run/secrets/preflight/token is not a file mounted alone (subPath) from a Secret',
    ])
  })

  it('service links on', () => {
    const objects = broken((o) => {
      pod(o, 'preflight-coordinator').enableServiceLinks = true
    })
    expect(podEnvironmentProblems(objects)).toEqual([
      'Deployment/preflight/preflight-coordinator: service links on',
    ])
  })

  it('a grace period shorter than the drain', () => {
    const objects = broken((o) => {
      pod(o, 'preflight-worker').terminationGracePeriodSeconds = 600
    })
    expect(gracePeriodProblems(objects)).toEqual([
      'Deployment/preflight-workers/preflight-worker worker: terminationGracePeriodSeconds 600 < 609',
    ])
  })

  it('a misspelt field, and a value of the wrong type', () => {
    const objects = broken((o) => {
      const spec = pod(o, 'preflight-worker') as unknown as Record<string, unknown>
      spec.terminationGracePeriodSecond = 630
      const so = o.find((x) => x.kind === 'ScaledObject') as unknown as { spec: Record<string, unknown> }
      so.spec.maxReplicaCount = 'twenty'
    })
    expect(objects.flatMap(schemaProblems)).toEqual([
      'Deployment/preflight-workers/preflight-worker: /spec/template/spec/terminationGracePeriodSecond is no field of its schema',
      'ScaledObject/preflight-workers/preflight-worker: /spec/maxReplicaCount must be integer',
    ])
  })
})

function containersNamed(objects: K8sObject[], name: string): Container[] {
  return podsOf(objects).flatMap((p) => p.spec.containers.filter((c) => c.name === name))
}
