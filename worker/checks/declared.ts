// Every requirement a contextRequires declares, including kinds and git facts this version does not know:
// a definition written for a newer worker must fail closed here (error: unknown-kind), never be skipped.
import {
  type ContextRequires,
  GitFact,
  listRequirements,
  type Requirement,
  RequirementKind,
} from '../../src/contract/index.js'

const KNOWN = new Set<string>(RequirementKind.options)

export function declaredRequirements(requires: ContextRequires | undefined): Requirement[] {
  const list = listRequirements(requires)
  if (!requires || typeof requires !== 'object') return list
  const git: unknown = requires.git
  for (const fact of git && typeof git === 'object' ? Object.keys(git) : []) {
    if (!(GitFact as readonly string[]).includes(fact)) list.push({ kind: 'git', requirement: fact })
  }
  for (const [key, value] of Object.entries(requires)) {
    if (KNOWN.has(key)) continue
    for (const item of itemsOf(value)) list.push({ kind: key as RequirementKind, requirement: item })
  }
  return list
}

function itemsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
  if (value && typeof value === 'object') return Object.keys(value)
  return [String(JSON.stringify(value))]
}
