// Every requirement a contextRequires declares, read from whatever arrived rather than from its type: kinds and
// git facts this version does not know, and values of a shape it cannot read, fail closed (error), never skipped.
import type { Requirement, RequirementKind } from '../../src/contract/index.js'
import { GitFact, REQUIREMENT_KINDS } from '../../src/contract/light.js'

// A declared requirement; `problem` says why it cannot be checked as declared (the evaluator answers error).
export interface Declared extends Requirement {
  problem?: string
}

const KNOWN = new Set<string>(REQUIREMENT_KINDS)

// In declaration order as listRequirements gives it for a valid contextRequires: paths, exec, the git facts
// this version knows, then git facts and kinds it does not know.
export function declaredRequirements(requires: unknown): Declared[] {
  if (requires === undefined) return []
  if (!isRecord(requires)) throw new TypeError('contextRequires must be an object')
  const list = [
    ...entries('paths', requires.paths),
    ...entries('exec', requires.exec),
    ...facts(requires.git),
  ]
  for (const [key, value] of Object.entries(requires)) {
    // the evaluator has no checker for the kind: error unknown-kind
    if (!KNOWN.has(key)) list.push(...itemsOf(value).map((item) => declared(key, item)))
  }
  return list
}

// paths and exec: a list of strings.
function entries(kind: 'paths' | 'exec', value: unknown): Declared[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) return [declared(kind, textOf(value), `${kind} must be a list`)]
  return value.map((item) =>
    typeof item === 'string'
      ? declared(kind, item)
      : declared(kind, textOf(item), `${kind} entries must be strings`),
  )
}

// git: an object of facts, each true (must hold) or false (must not hold).
function facts(git: unknown): Declared[] {
  if (git === undefined) return []
  if (!isRecord(git)) return [declared('git', textOf(git), 'git must be an object of facts')]
  const list: Declared[] = []
  for (const fact of GitFact) {
    const value = git[fact]
    if (value === undefined) continue
    list.push(
      typeof value === 'boolean'
        ? declared('git', fact)
        : declared('git', fact, `git.${fact} must be true or false`),
    )
  }
  // the git checker does not know the fact: error unknown-kind
  for (const fact of Object.keys(git))
    if (!(GitFact as readonly string[]).includes(fact)) list.push(declared('git', fact))
  return list
}

// An unknown kind's entries: a list's items, an object's keys, or the value itself.
function itemsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(textOf)
  if (isRecord(value)) return Object.keys(value)
  return [textOf(value)]
}

function declared(kind: string, requirement: string, problem?: string): Declared {
  return { kind: kind as RequirementKind, requirement, ...(problem === undefined ? {} : { problem }) }
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : String(JSON.stringify(value))
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
