// Renders the JSON Schemas in schemas/ from the zod contract.
import { z } from 'zod'
import { SubagentDefinition } from './definition.js'
import { CheckReport, CheckResult, PreflightReport } from './report.js'
import { ContextRequires } from './requirements.js'

const sources = {
  'context-requires.schema.json': ContextRequires,
  'subagent-definition.schema.json': SubagentDefinition,
  'check-result.schema.json': CheckResult,
  'preflight-report.schema.json': PreflightReport,
  'check-report.schema.json': CheckReport,
}

export function renderSchemas(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [file, schema] of Object.entries(sources)) {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any' })
    const doc = { $comment: 'generated from src/contract by `npm run schemas` — do not edit', ...json }
    out[file] = `${JSON.stringify(doc, null, 2)}\n`
  }
  return out
}
