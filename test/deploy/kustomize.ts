// deploy/kubernetes rendered without kustomize: no maintained kustomize installs from npm or Debian, so
// this renders the part of it the manifests use, as `kubectl kustomize DIR` does (the test compares the
// two where kubectl is installed). A kustomization's `resources` (YAML files, and directories holding a
// kustomization.yaml), `images` (newName, newTag, digest, on every container and init container) and
// `patches` (JSON 6902 operations on a target, or a strategic-merge patch that is only `$patch: delete`).
// Anything else in a kustomization is refused, so a manifest cannot lean on a feature this skips.
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, parse as parseYaml } from 'yaml'

export type K8sObject = {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> }
  [key: string]: unknown
}

interface Image {
  name: string
  newName?: string
  newTag?: string
  digest?: string
}
interface Patch {
  target?: { kind?: string; name?: string; namespace?: string }
  patch: string
}
interface Kustomization {
  resources?: string[]
  images?: Image[]
  patches?: Patch[]
}

const KNOWN = new Set(['apiVersion', 'kind', 'resources', 'images', 'patches'])

export function render(dir: string): K8sObject[] {
  const k = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization
  const unknown = Object.keys(k).filter((key) => !KNOWN.has(key))
  if (unknown.length > 0)
    throw new Error(`${dir}/kustomization.yaml: not rendered here: ${unknown.join(', ')}`)
  let objects = (k.resources ?? []).flatMap((r) => {
    const path = join(dir, r)
    return statSync(path).isDirectory() ? render(path) : readObjects(path)
  })
  for (const p of k.patches ?? []) objects = patched(objects, p)
  for (const image of k.images ?? []) for (const o of objects) setImage(o, image)
  return objects
}

export const keyOf = (o: K8sObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`

function readObjects(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`)
      return doc.toJS() as K8sObject | null
    })
    .filter((o): o is K8sObject => o !== null)
}

function patched(objects: K8sObject[], p: Patch): K8sObject[] {
  const body = parseYaml(p.patch) as unknown
  if (!Array.isArray(body)) {
    const del = body as K8sObject & { $patch?: string }
    if (del.$patch !== 'delete') throw new Error('a strategic-merge patch other than $patch: delete')
    const gone = objects.filter((o) => keyOf(o) === keyOf(del))
    if (gone.length !== 1) throw new Error(`$patch: delete of ${keyOf(del)} matches ${gone.length} objects`)
    return objects.filter((o) => keyOf(o) !== keyOf(del))
  }
  const { kind, name, namespace } = p.target ?? {}
  const targets = objects.filter(
    (o) =>
      (!kind || o.kind === kind) &&
      (!name || o.metadata.name === name) &&
      (!namespace || o.metadata.namespace === namespace),
  )
  if (targets.length === 0)
    throw new Error(`a patch whose target matches nothing: ${JSON.stringify(p.target)}`)
  for (const o of targets) for (const op of body as JsonPatchOp[]) applyOp(o, op)
  return objects
}

interface JsonPatchOp {
  op: 'add' | 'replace' | 'remove'
  path: string
  value?: unknown
}

// RFC 6902 add, replace and remove ("-" appends to an array).
function applyOp(doc: unknown, { op, path, value }: JsonPatchOp): void {
  const keys = path
    .split('/')
    .slice(1)
    .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'))
  const last = keys.pop()
  let at = doc as Record<string, unknown>
  for (const k of keys) {
    at = at[k] as Record<string, unknown>
    if (at === undefined) throw new Error(`${path}: no ${k}`)
  }
  if (last === undefined) throw new Error(`${path}: the whole document`)
  if (Array.isArray(at)) {
    const i = last === '-' ? at.length : Number(last)
    if (op === 'add') at.splice(i, 0, value)
    else if (op === 'replace') at[i] = value
    else at.splice(i, 1)
    return
  }
  if (op === 'remove') delete at[last]
  else if (op === 'replace' && !(last in at)) throw new Error(`${path}: nothing to replace`)
  else at[last] = value
}

// Every `image` of a container or init container, anywhere in the object (a ScaledJob's template too).
function setImage(node: unknown, image: Image): void {
  if (Array.isArray(node)) {
    for (const n of node) setImage(n, image)
    return
  }
  if (node === null || typeof node !== 'object') return
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
      for (const c of value as { image?: string }[]) if (c.image) c.image = renamed(c.image, image)
    } else setImage(value, image)
  }
}

function renamed(ref: string, image: Image): string {
  const [, name, tag, digest] = /^([^:@]+(?::\d+\/[^:@]+)?)(?::([^@]+))?(?:@(.+))?$/.exec(ref) ?? []
  if (name !== image.name) return ref
  const newDigest = image.digest ?? digest
  const newTag = image.digest ? undefined : (image.newTag ?? tag)
  return `${image.newName ?? name}${newTag ? `:${newTag}` : ''}${newDigest ? `@${newDigest}` : ''}`
}
