// A dispatch's observation (--observe; docs/attribution.md): setup and the agent run under the tracer, or,
// without one, their output is read for not-found messages; at the end, what they used is held against
// the definition's requirements. Observing never changes a preflight verdict: it is read after the agent.
import { basename } from 'node:path'
import {
  type ContextRequires,
  MAX_OBSERVED_EXEC,
  MAX_OBSERVED_NAME,
  MAX_OBSERVED_PATH,
  MAX_OBSERVED_PATHS,
  type Observed,
  type Undeclared,
} from '../../src/contract/index.js'
import { planPattern } from '../checks/pattern.js'
import type { AgentIdentity, RunResult } from '../run/process.js'
import { notFoundIn } from './output.js'
import type { Needs } from './parse.js'
import { type Tracer, traced } from './trace.js'

export type Start = (
  argv: readonly string[],
  env: Record<string, string>,
  identity: AgentIdentity | undefined,
) => Promise<RunResult>

export type Step = 'setup' | 'agent'

// What the completion may carry: the contract's bounds, and the whole observation at most this many bytes
// of JSON (a completion is refused past the coordinator's body limit).
const MAX_JSON_BYTES = 256 * 1024

interface Seen {
  path?: string
  ran: boolean
  step: Step
}

export class Observation {
  private readonly exec = new Map<string, Seen>()
  private readonly paths = new Set<string>()
  private cut = false
  private searched = ''
  private ran = false
  // a run read from the output (no tracer, or the trace could not be made): the record is the program's word
  private untraced = false
  private readonly notes = new Set<string>()

  // `tracer`: the worker's, or why it has none (the output is read instead); `under`: where its FIFOs go
  constructor(
    private readonly tracer: Tracer | string,
    private readonly under?: string,
  ) {}

  async run(
    workspace: string,
    argv: readonly string[],
    env: Record<string, string>,
    identity: AgentIdentity | undefined,
    start: Start,
    step: Step = 'agent',
  ): Promise<RunResult> {
    this.searched = env.PATH ?? ''
    this.ran = true
    const trace = typeof this.tracer === 'string' ? this.tracer : this.traceOf(workspace, argv, env, identity)
    if (typeof trace === 'string') {
      const result = await start(argv, env, identity)
      this.untraced = true
      this.notes.add(trace)
      const said = notFoundIn(result.tail).map((name) => ({ name, ran: true }))
      this.add({ exec: said, paths: [], cut: false }, step)
      return result
    }
    if (!identity) this.notes.add('the agent ran as the worker’s own uid: it could reach its tracer')
    let result: RunResult
    try {
      result = await start(trace.argv, trace.env, undefined)
    } catch (err) {
      // its FIFO and its tracer are ended whatever becomes of the run
      await trace.needs()
      throw err
    }
    const needs = await trace.needs()
    // a shell's "not found" says the name was meant to run, where a look (command -v) says nothing
    const said = new Set(notFoundIn(result.tail))
    this.add({ ...needs, exec: needs.exec.map((n) => (said.has(n.name) ? { ...n, ran: true } : n)) }, step)
    return result
  }

  private traceOf(
    workspace: string,
    argv: readonly string[],
    env: Record<string, string>,
    identity?: AgentIdentity,
  ) {
    const pathEntries = (env.PATH ?? '').split(':')
    try {
      return traced(this.tracer as Tracer, argv, env, {
        workspace,
        pathEntries,
        ...(identity ? { identity } : {}),
        ...(this.under ? { under: this.under } : {}),
      })
    } catch (err) {
      // the run goes on untraced rather than failing for its observer
      return `not traced: ${err instanceof Error ? err.message : String(err)}`
    }
  }

  private add(needs: Needs, step: Step): void {
    for (const need of needs.exec) {
      if (need.name.length > MAX_OBSERVED_NAME || (need.path?.length ?? 0) > MAX_OBSERVED_PATH) {
        this.cut = true
        continue
      }
      const seen = this.exec.get(need.name)
      if (!seen && this.exec.size >= MAX_OBSERVED_EXEC) {
        this.cut = true
        continue
      }
      // found wins over missing; the agent's step over setup's, and how the name was tried is the kept
      // step's own (setup that ran it and an agent that only looked it up: a look)
      const keep = seen !== undefined && seen.step === 'agent' && step === 'setup'
      const path = need.path ?? seen?.path
      this.exec.set(need.name, {
        ...(path ? { path } : {}),
        ran: keep ? (seen?.ran ?? false) : need.ran === true || (seen?.step === step && seen.ran),
        step: keep ? 'agent' : step,
      })
    }
    for (const path of needs.paths) {
      if (path.length > MAX_OBSERVED_PATH || (!this.paths.has(path) && this.paths.size >= MAX_OBSERVED_PATHS))
        this.cut = true
      else this.paths.add(path)
    }
    this.cut ||= needs.cut
    if (needs.note) this.notes.add(needs.note)
  }

  // What was seen, and what of it the definition does not declare. The agent's own program is declared by
  // agent.command; `git` by a git requirement as by an exec one.
  record(
    requires: ContextRequires | undefined,
    agentCommand: readonly string[],
  ): { observed?: Observed; undeclared?: Undeclared[] } {
    if (!this.ran) return {}
    const exec = [...this.exec].map(([name, seen]) => ({
      name,
      ...(seen.path ? { path: seen.path } : {}),
      ...(seen.ran ? { ran: true } : {}),
    }))
    const declared = new Set(requires?.exec ?? [])
    if (requires?.git) declared.add('git')
    if (agentCommand[0]) declared.add(basename(agentCommand[0]))
    const patterns = (requires?.paths ?? []).map((pattern) => planPattern(pattern))
    const covers = (path: string) =>
      patterns.some((plan) => (plan.glob ? plan.matches(path) : plan.path === path))
    const searched = this.searched.slice(0, 8192)
    const undeclared: Undeclared[] = [
      ...[...this.exec]
        .filter(([name]) => !declared.has(name))
        .map(
          ([name, seen]): Undeclared =>
            seen.path
              ? { kind: 'exec', name, state: 'present', path: seen.path, step: seen.step }
              : {
                  kind: 'exec',
                  name,
                  state: 'missing',
                  searched,
                  tried: seen.ran ? 'run' : 'lookup',
                  step: seen.step,
                },
        ),
      ...[...this.paths]
        .filter((path) => !covers(path))
        .map((path): Undeclared => ({ kind: 'paths', path, state: 'missing' })),
    ]
    const note = [...this.notes].join('; ').slice(0, 500)
    const observed: Observed = {
      source: this.untraced ? 'output' : 'trace',
      ...(note ? { note } : {}),
      exec,
      paths: [...this.paths],
      ...(this.cut ? { cut: true } : {}),
    }
    return withinBudget(observed, undeclared)
  }
}

// The observation as JSON at most MAX_JSON_BYTES: entries dropped from the end (and `cut` said) until it
// fits, each one's bytes counted once. Names and paths of control characters take six bytes each escaped.
export function withinBudget(observed: Observed, undeclared: Undeclared[]) {
  const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value)) + 1
  let size = bytes({ observed, undeclared })
  while (size > MAX_JSON_BYTES && (observed.exec.length > 0 || observed.paths.length > 0)) {
    observed.cut = true
    const dropped = observed.paths.length > observed.exec.length ? observed.paths.pop() : observed.exec.pop()
    const key = typeof dropped === 'string' ? dropped : dropped?.name
    const at = undeclared.findIndex((need) => (need.kind === 'paths' ? need.path : need.name) === key)
    size -= bytes(dropped) + (at >= 0 ? bytes(undeclared.splice(at, 1)[0]) : 0)
  }
  return { observed, undeclared }
}
