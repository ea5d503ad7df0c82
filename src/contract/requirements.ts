// contextRequires (schema version 1): what a subagent declares about its workspace (docs/requirements.md).
import { z } from 'zod'
import {
  BAD_EXEC_NAME,
  EMPTY_PATTERN,
  EXEC_NAME,
  GitFact,
  LONG_PATTERN,
  MAX_EXEC,
  MAX_PATHS,
  MAX_PATTERN_LENGTH,
  PATTERN_RULES,
  REQUIREMENT_KINDS,
} from './light.js'

export { EXEC_NAME, GitFact, MAX_EXEC, MAX_PATHS, MAX_PATTERN_LENGTH } from './light.js'

const noDuplicates = (list: string[]) => new Set(list).size === list.length

// The grammar of a path pattern (docs/requirements.md, "paths"), its rules and messages in light.ts. zod's
// `max` counts code points, as light.ts's `characters` and JSON Schema's `maxLength` do (test/contract).
export const PathPattern = PATTERN_RULES.reduce(
  (schema, [rule, message]) => schema.regex(rule, message),
  z.string().min(1, EMPTY_PATTERN).max(MAX_PATTERN_LENGTH, LONG_PATTERN),
)

export const ExecName = z.string().regex(EXEC_NAME, BAD_EXEC_NAME)

export const GitRequirements = z.strictObject({
  worktree: z.boolean().optional(),
  history: z.boolean().optional(),
})

export const ContextRequires = z.strictObject({
  paths: z
    .array(PathPattern)
    .max(MAX_PATHS, `at most ${MAX_PATHS} path patterns`)
    .refine(noDuplicates, 'path patterns must not repeat')
    .optional(),
  exec: z
    .array(ExecName)
    .max(MAX_EXEC, `at most ${MAX_EXEC} exec names`)
    .refine(noDuplicates, 'exec names must not repeat')
    .optional(),
  git: GitRequirements.optional(),
})
export type ContextRequires = z.infer<typeof ContextRequires>

export const RequirementKind = z.enum(REQUIREMENT_KINDS)
export type RequirementKind = z.infer<typeof RequirementKind>

export interface Requirement {
  kind: RequirementKind
  requirement: string
}

// Every declared requirement in declaration order: paths, then exec, then git (worktree, history).
export function listRequirements(requires: ContextRequires | undefined): Requirement[] {
  const list: Requirement[] = []
  for (const pattern of requires?.paths ?? []) list.push({ kind: 'paths', requirement: pattern })
  for (const name of requires?.exec ?? []) list.push({ kind: 'exec', requirement: name })
  for (const fact of GitFact) {
    if (requires?.git?.[fact] !== undefined) list.push({ kind: 'git', requirement: fact })
  }
  return list
}

// Drops what declares nothing (empty lists, empty git), so `{}` and absent are the same definition.
export function normaliseRequires(requires: ContextRequires | undefined): ContextRequires | undefined {
  if (!requires) return undefined
  const out: ContextRequires = {}
  if (requires.paths?.length) out.paths = requires.paths
  if (requires.exec?.length) out.exec = requires.exec
  if (requires.git && Object.keys(requires.git).length > 0) out.git = requires.git
  return Object.keys(out).length > 0 ? out : undefined
}
