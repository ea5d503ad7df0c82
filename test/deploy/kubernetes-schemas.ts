// Every object of deploy/kubernetes against the Kubernetes API schemas of one version (kubernetes-models
// 5.1.0: Kubernetes 1.36.0) and KEDA's CRD schemas (@kubernetes-models/keda 2.0.0), both pinned in
// package.json. The schemas leave unknown fields alone, as a lenient apply would: a misspelt field is
// caught here by giving it a value no schema accepts, and seeing whether the schema objects.
import { ScaledJob } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledJob'
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject'
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { Namespace } from 'kubernetes-models/v1/Namespace'
import { Service } from 'kubernetes-models/v1/Service'
import { type K8sObject, keyOf } from './kustomize.js'

type Model = new (data: object) => { validate(): void }
const MODELS: Record<string, Model> = Object.fromEntries(
  [Namespace, Service, Deployment, StatefulSet, Job, PodDisruptionBudget, NetworkPolicy]
    .concat([ScaledObject, ScaledJob, TriggerAuthentication] as never[])
    .map((m) => {
      const { apiVersion, kind } = m as unknown as { apiVersion: string; kind: string }
      return [`${apiVersion} ${kind}`, m as unknown as Model]
    }),
)

interface SchemaError {
  instancePath: string
  message?: string
}

function errorsOf(model: Model, data: object): SchemaError[] {
  try {
    new model(data).validate()
    return []
  } catch (err) {
    return (err as { errors?: SchemaError[] }).errors ?? [{ instancePath: '', message: String(err) }]
  }
}

// One line per error and per field the schema does not know.
export function schemaProblems(o: K8sObject): string[] {
  const model = MODELS[`${o.apiVersion} ${o.kind}`]
  if (!model) return [`${keyOf(o)}: no schema here for ${o.apiVersion} ${o.kind}`]
  // KEDA's schema takes a ScaledJob's Job spec as it comes: it is checked as a Job's spec
  const jobSpec = o.kind === 'ScaledJob' ? (o.spec as { jobTargetRef: object }).jobTargetRef : undefined
  const asJob = jobSpec && {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: o.metadata.name },
    spec: jobSpec,
  }
  return [
    ...checked(model, o, jobSpec ? ['spec', 'jobTargetRef'] : undefined),
    ...(asJob
      ? checked(Job as unknown as Model, asJob).map((p) => p.replace('/spec', '/spec/jobTargetRef'))
      : []),
  ].map((p) => `${keyOf(o)}: ${p}`)
}

function checked(model: Model, o: object, skip?: string[]): string[] {
  const errors = errorsOf(model, o).map((e) => `${e.instancePath || '/'} ${e.message}`)
  const unknown = fieldsOf(o)
    .filter((path) => !skip || path.slice(0, skip.length).join('/') !== skip.join('/'))
    .filter((path) => {
      const at = pointer(path)
      return !errorsOf(model, withValue(o, path, Symbol('probe'))).some((e) => e.instancePath.startsWith(at))
    })
    .map((path) => `${pointer(path)} is no field of its schema`)
  return [...errors, ...unknown]
}

// The path of every object key, through arrays (their indices in the path), outermost first.
function fieldsOf(node: unknown, at: string[] = []): string[][] {
  if (Array.isArray(node)) return node.flatMap((n, i) => fieldsOf(n, [...at, String(i)]))
  if (node === null || typeof node !== 'object') return []
  return Object.entries(node).flatMap(([k, v]) => [[...at, k], ...fieldsOf(v, [...at, k])])
}

const pointer = (path: string[]) =>
  `/${path.map((k) => k.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`

function withValue(o: object, path: string[], value: unknown): object {
  const copy = structuredClone(o)
  let at = copy as Record<string, unknown>
  for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>
  at[path.at(-1) as string] = value
  return copy
}
