// `preflight subagents apply -f FILE` — registers a subagent definition written in JSON or YAML over
// POST /v1/subagents: a new version when the definition changed (201), the latest one when it did not
// (200). The coordinator judges the definition; its refusal is one line with its message, exit 2.
import { parse as parseYaml, YAMLParseError } from 'yaml'
import type { SubagentDefinition } from '../contract/index.js'
import { withStatus } from './api.js'
import { coordinatorUrl, formatOf, tokenFrom } from './args.js'
import { UsageError } from './errors.js'
import type { APPLY_FLAGS, Values } from './flags.js'
import { readInput } from './input.js'

export async function apply(values: Values<typeof APPLY_FLAGS>): Promise<number> {
  const format = formatOf(values.format)
  if (values.file === undefined) throw new UsageError('give the definition with -f FILE (- reads stdin)')
  const api = { base: coordinatorUrl(values.coordinator), token: tokenFrom(values.token, 'an orchestrator') }
  const source = values.file === '-' ? 'stdin' : values.file
  const definition = parseDefinition(source, await readInput(values.file))
  const { body, status } = await withStatus(
    api,
    (client) => client.registerSubagent(definition as SubagentDefinition),
    // 413: larger than the coordinator takes; 422: a definition it cannot store
    { what: `the definition in ${source}`, faults: [413, 422] },
  )
  const created = status === 201
  process.stdout.write(
    format === 'json'
      ? `${JSON.stringify({ ...body, created })}\n`
      : `${body.name} v${body.version} ${created ? 'created' : 'unchanged'}\n`,
  )
  return 0
}

// JSON for a file named *.json; YAML otherwise (stdin too: YAML reads JSON as well). Not judged here:
// the coordinator's schema is the one that decides, and a newer coordinator may know more.
export function parseDefinition(source: string, text: string): unknown {
  let parsed: unknown
  if (source.endsWith('.json')) {
    try {
      parsed = JSON.parse(text)
    } catch (err) {
      throw new UsageError(`${source} is not valid JSON: ${(err as Error).message}`)
    }
  } else {
    try {
      // warnings (an unknown tag) would be printed by yaml itself: errors only
      parsed = parseYaml(text, { logLevel: 'error' })
    } catch (err) {
      throw new UsageError(`${source} is not valid YAML: ${yamlProblem(err)}`)
    }
  }
  if (parsed === null || parsed === undefined) throw new UsageError(`${source} holds no definition`)
  return parsed
}

// The first line of yaml's message ("… at line 2, column 1:" then the source shown), in our words for
// a file of several documents.
function yamlProblem(err: unknown): string {
  if (!(err instanceof YAMLParseError)) throw err
  if (err.code === 'MULTIPLE_DOCS') return 'it holds more than one document (one definition a file)'
  return (err.message.split('\n')[0] ?? '').replace(/:$/, '')
}
