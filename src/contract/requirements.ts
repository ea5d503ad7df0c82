// contextRequires (schema version 1): what a subagent declares about its workspace (docs/requirements.md).
import { z } from 'zod'

export const MAX_PATHS = 256
export const MAX_EXEC = 256
export const MAX_PATTERN_LENGTH = 512
export const EXEC_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/

const noDuplicates = (list: string[]) => new Set(list).size === list.length

// The grammar of docs/requirements.md, "paths". `[\s\S]`, not `.`: a name may hold a newline, and
// `.` would let one hide a ".." segment behind it.
export const PathPattern = z
  .string()
  .min(1, 'a path pattern must not be empty')
  .max(MAX_PATTERN_LENGTH, `a path pattern must be at most ${MAX_PATTERN_LENGTH} characters`)
  .regex(/^[^/]/, 'a path pattern must be relative to the workspace, not absolute')
  .regex(/^(?!(?:[\s\S]*\/)?\.\.(?:\/|$))/, 'a path pattern must not contain a ".." segment')
  .regex(/^[^\\]*$/, 'a path pattern must use "/" separators, not backslashes')
  .regex(/^[^\0]*$/, 'a path pattern must not contain NUL')
  .regex(/^[^!]/, 'a path pattern must not be a negation (leading "!")')
  .regex(/^(?![\s\S]*\/\/)/, 'a path pattern must be in normal form: no empty segment ("a//b")')
  .regex(
    /^(?:\.\/)?(?!(?:[\s\S]*\/)?\.(?:\/|$))[\s\S]/,
    'a path pattern must be in normal form: no "." segment ("a/./b"), only one leading "./", and a name after it',
  )

export const ExecName = z
  .string()
  .regex(EXEC_NAME, 'an exec name must be a bare binary name (letters, digits, "._+-"; no slash)')

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

export const RequirementKind = z.enum(['paths', 'exec', 'git'])
export type RequirementKind = z.infer<typeof RequirementKind>

export const GitFact = ['worktree', 'history'] as const
export type GitFact = (typeof GitFact)[number]

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
