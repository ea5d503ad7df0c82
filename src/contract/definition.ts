// Subagent definitions, their normal form and their content hash (docs/http-api.md, "Subagents").
import { createHash } from 'node:crypto'
import { z } from 'zod'
import { ContextRequires, normaliseRequires } from './requirements.js'

export const SUBAGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

export const AgentSpec = z.strictObject({
  command: z.array(z.string().min(1)).min(1, 'agent.command needs at least the program to run'),
  env: z
    .record(z.string().regex(ENV_NAME, 'an env name must match [A-Za-z_][A-Za-z0-9_]*'), z.string())
    .optional(),
})

export const SubagentDefinition = z.strictObject({
  name: z.string().regex(SUBAGENT_NAME, 'a subagent name is 1-128 of letters, digits, "._-"'),
  description: z.string().max(4096).optional(),
  agent: AgentSpec,
  contextRequires: ContextRequires.optional(),
})
export type SubagentDefinition = z.infer<typeof SubagentDefinition>

// The stored form: optional fields written only when set, empty contextRequires dropped.
export function normaliseDefinition(def: SubagentDefinition): SubagentDefinition {
  const out: SubagentDefinition = { name: def.name, agent: { command: def.agent.command } }
  if (def.description !== undefined) out.description = def.description
  if (def.agent.env !== undefined) out.agent.env = def.agent.env
  const requires = normaliseRequires(def.contextRequires)
  if (requires) out.contextRequires = requires
  return out
}

// JSON with object keys sorted (JavaScript's default string order), arrays in order, no whitespace.
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

// Lowercase hex sha256 of the canonical JSON of the normalised definition.
export function hashDefinition(def: SubagentDefinition): string {
  return createHash('sha256')
    .update(canonicalJson(normaliseDefinition(def)), 'utf8')
    .digest('hex')
}
