// What setup and the agent were seen to use (docs/attribution.md): the programs they looked up on the
// PATH and the workspace files they opened that were not there, and, against the definition, what no
// requirement declares. A worker that observes (--observe) sends it with the completion.
import { z } from 'zod'

export const MAX_OBSERVED_EXEC = 200
export const MAX_OBSERVED_PATHS = 100
export const MAX_OBSERVED_NAME = 255
export const MAX_OBSERVED_PATH = 4096
const NAME = z.string().min(1).max(MAX_OBSERVED_NAME)
const PATH = z.string().min(1).max(MAX_OBSERVED_PATH)

export const ObservedSource = z.enum(['trace', 'output'])

export const Observed = z.strictObject({
  // `trace`: the worker's tracer saw it; `output`: read from what the programs printed (no tracer: `note` says why)
  source: ObservedSource,
  note: z.string().max(500).optional(),
  // each name looked up on the PATH: where it was found, or no path when every entry was searched in vain;
  // `ran`: an exec of it was tried, or a shell said it was not found (not only looked up, as `command -v`)
  exec: z
    .array(z.strictObject({ name: NAME, path: PATH.optional(), ran: z.boolean().optional() }))
    .max(MAX_OBSERVED_EXEC),
  // workspace-relative files opened that were not there
  paths: z.array(PATH).max(MAX_OBSERVED_PATHS),
  // a bound cut the record: more was seen than it keeps
  cut: z.boolean().optional(),
})
export type Observed = z.infer<typeof Observed>

// A need no requirement of the definition covers: `missing` (not there when used) or `present` (there, by luck).
export const Undeclared = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('exec'),
    name: NAME,
    state: z.enum(['missing', 'present']),
    // where it was found (present), or the PATH searched in vain (missing)
    path: PATH.optional(),
    searched: z.string().max(8192).optional(),
    // `run`: its exec was tried, or a shell said it was not found; `lookup`: only looked up (`command -v`)
    tried: z.enum(['run', 'lookup']).optional(),
    // in which program: setup's or the agent's (the agent's when both)
    step: z.enum(['setup', 'agent']).optional(),
  }),
  z.strictObject({ kind: z.literal('paths'), path: PATH, state: z.literal('missing') }),
])
export type Undeclared = z.infer<typeof Undeclared>
export const UndeclaredList = z.array(Undeclared).max(MAX_OBSERVED_EXEC + MAX_OBSERVED_PATHS)

// A failed agent that ran a program no requirement declares and that was not there: its own run, not
// setup's, and not a look only (a script that asks `command -v pnpm` and goes on without it).
export const hasMissingProgram = (undeclared: readonly Undeclared[] | undefined): boolean =>
  undeclared?.some(
    (need) =>
      need.kind === 'exec' && need.state === 'missing' && need.tried !== 'lookup' && need.step !== 'setup',
  ) === true

// One undeclared need as its author would act on it (the CLI's `dispatches show` and the operator page).
export function undeclaredText(need: Undeclared): string {
  if (need.kind === 'paths') return `${need.path} was opened and was not there; no paths pattern matches it`
  const declare = `no requirement declares it — add exec: [${need.name}]`
  const where = need.step === 'setup' ? ' by setup' : ''
  if (need.state === 'present')
    return `${need.name} was found${where} at ${need.path ?? '?'}, by luck; ${declare}`
  const how = need.tried === 'lookup' ? 'looked up' : 'run'
  return `${need.name} was ${how}${where} and not found${need.searched ? ` on ${need.searched}` : ''}; ${declare}`
}
