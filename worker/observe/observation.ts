// A dispatch's observation (--observe; docs/attribution.md): setup and the agent run under the tracer, or,
// without one, their output is read for not-found messages; at the end, what they used is held against
// the definition's requirements. Observing never changes a preflight verdict: it is read after the agent.
import { basename } from 'node:path'
import type { ContextRequires, Observed, Undeclared } from '../../src/contract/index.js'
import { planPattern } from '../checks/pattern.js'
import type { AgentIdentity, RunResult } from '../run/process.js'
import { notFoundIn } from './output.js'
import type { ExecNeed, Needs } from './parse.js'
import { type Tracer, traced } from './trace.js'

export type Start = (
  argv: readonly string[],
  env: Record<string, string>,
  identity: AgentIdentity | undefined,
) => Promise<RunResult>

export class Observation {
  private readonly exec = new Map<string, ExecNeed>()
  private readonly paths = new Set<string>()
  private cut = false
  private searched = ''
  private ran = false

  // `tracer`: the worker's, or why it has none (the output is read instead)
  constructor(private readonly tracer: Tracer | string) {}

  async run(
    workspace: string,
    argv: readonly string[],
    env: Record<string, string>,
    identity: AgentIdentity | undefined,
    start: Start,
  ): Promise<RunResult> {
    this.searched = env.PATH ?? ''
    this.ran = true
    if (typeof this.tracer === 'string') {
      const result = await start(argv, env, identity)
      this.add({ exec: notFoundIn(result.tail).map((name) => ({ name })), paths: [], cut: false })
      return result
    }
    const trace = traced(this.tracer, argv, env, identity)
    try {
      const result = await start(trace.argv, trace.env, undefined)
      this.add(await trace.needs(workspace, this.searched.split(':')))
      return result
    } finally {
      trace.dispose()
    }
  }

  private add(needs: Needs): void {
    for (const need of needs.exec) {
      const seen = this.exec.get(need.name)
      if (!seen?.path) this.exec.set(need.name, need)
    }
    for (const path of needs.paths) this.paths.add(path)
    this.cut ||= needs.cut
  }

  // What was seen, and what of it the definition does not declare. The agent's own program is declared by
  // agent.command; `git` by a git requirement as by an exec one.
  record(
    requires: ContextRequires | undefined,
    agentCommand: readonly string[],
  ): { observed?: Observed; undeclared?: Undeclared[] } {
    if (!this.ran) return {}
    const fromTrace = typeof this.tracer !== 'string'
    const observed: Observed = {
      source: fromTrace ? 'trace' : 'output',
      ...(fromTrace ? {} : { note: this.tracer as string }),
      exec: [...this.exec.values()],
      paths: [...this.paths],
      ...(this.cut ? { cut: true } : {}),
    }
    const declared = new Set(requires?.exec ?? [])
    if (requires?.git) declared.add('git')
    if (agentCommand[0]) declared.add(basename(agentCommand[0]))
    const patterns = (requires?.paths ?? []).map((pattern) => planPattern(pattern))
    const covers = (path: string) =>
      patterns.some((plan) => (plan.glob ? plan.matches(path) : plan.path === path))
    const undeclared: Undeclared[] = [
      ...observed.exec
        .filter((need) => !declared.has(need.name))
        .map(
          (need): Undeclared =>
            need.path
              ? { kind: 'exec', name: need.name, state: 'present', path: need.path }
              : { kind: 'exec', name: need.name, state: 'missing', searched: this.searched.slice(0, 8192) },
        ),
      ...observed.paths
        .filter((path) => !covers(path))
        .map((path): Undeclared => ({ kind: 'paths', path, state: 'missing' })),
    ]
    return { observed, undeclared }
  }
}
