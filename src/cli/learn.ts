// `preflight learn`: a command run under the worker's tracer (or a dispatch's stored observation) and the
// contextRequires it suggests; with --against, what a definition declares that was never used and what
// was used that it does not declare (docs/attribution.md).
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import { resolve } from 'node:path'
import { planPattern } from '../../worker/checks/pattern.js'
import type { Needs } from '../../worker/observe/parse.js'
import { findTracer, traced } from '../../worker/observe/trace.js'
import { ContextRequires, type DispatchView } from '../contract/index.js'
import { visible } from '../log/controls.js'
import { call } from './api.js'
import { apiOf, resolveId } from './dispatches.js'
import { UsageError } from './errors.js'
import type { LEARN_FLAGS, Values } from './flags.js'
import { readSmallFile } from './input.js'

type LearnFlags = Values<typeof LEARN_FLAGS>

export interface Learned {
  // `trace`: the command ran here under the tracer; `dispatch`: a dispatch's stored observation
  from: { trace: { command: string[]; exitCode: number } } | { dispatch: string; source: string }
  suggested: ContextRequires
  // looked up on every PATH entry in vain, and workspace files opened that were not there
  notFound: string[]
  missingFiles: string[]
  against?: { undeclared: ContextRequires; unused: ContextRequires }
}

export async function run(values: LearnFlags, args: string[]): Promise<number> {
  const format = values.format ?? 'text'
  if (format !== 'text' && format !== 'json')
    throw new UsageError(`--format is text or json, not "${format}"`)
  const against = values.against === undefined ? undefined : await readRequires(values.against)
  const command = args.flat()
  if (values.from !== undefined && command.length > 0)
    throw new UsageError('give a command to run or --from a dispatch, not both')
  const learned =
    values.from !== undefined ? await fromDispatch(values, values.from) : await traceRun(values, command)
  if (against) learned.against = compare(learned, against)
  process.stdout.write(format === 'json' ? `${JSON.stringify(learned, null, 2)}\n` : text(learned))
  return learned.against && !isEmpty(learned.against.undeclared) ? 1 : 0
}

async function traceRun(values: LearnFlags, command: string[]): Promise<Learned> {
  if (command.length === 0)
    throw new UsageError('give the command to learn from after --, or --from DISPATCH_ID')
  const tracer = findTracer()
  if (typeof tracer === 'string') throw new Error(`cannot trace here: ${tracer}`)
  const workspace = resolve(values.workspace ?? '.')
  const env = Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
  )
  const pathEntries = (env.PATH ?? '').split(':')
  const trace = traced(tracer, command, env, { workspace, pathEntries, reads: true })
  // the command's output goes to stderr: stdout is the suggestion's
  const child = spawn(trace.argv[0] as string, trace.argv.slice(1), {
    cwd: workspace,
    env: trace.env,
    stdio: ['inherit', process.stderr, 'inherit'],
  })
  const exitCode = await new Promise<number>((done, fail) => {
    child.once('error', fail)
    child.once('close', (code, signal) => done(code ?? 128 + (signal ? constants.signals[signal] : 0)))
  })
  return { from: { trace: { command, exitCode } }, ...suggest(await trace.needs()) }
}

async function fromDispatch(values: LearnFlags, idText: string): Promise<Learned> {
  const api = apiOf(values)
  const id = await resolveId(api, idText)
  const view = await call<DispatchView>(api, 'GET', `v1/dispatches/${id}`)
  const observed = view.completion?.observed
  if (!observed)
    throw new Error(
      `dispatch ${id} has no observation: its worker did not run with --observe, or it has not ended`,
    )
  const needs: Needs = { exec: observed.exec, paths: observed.paths, cut: observed.cut === true }
  return { from: { dispatch: id, source: observed.source }, ...suggest(needs) }
}

// Programs found (and git when it ran), and the files read: a file at the top of the workspace as itself,
// one deeper as its top directory (`src/`), which is what a definition usually declares.
function suggest(needs: Needs): Pick<Learned, 'suggested' | 'notFound' | 'missingFiles'> {
  const found = needs.exec.filter((need) => need.path !== undefined).map((need) => need.name)
  const paths = [
    ...new Set((needs.read ?? []).map((file) => (file.includes('/') ? `${file.split('/')[0]}/` : file))),
  ]
  const suggested: ContextRequires = {
    ...(paths.length > 0 ? { paths: paths.sort() } : {}),
    ...(found.length > 0 ? { exec: [...found].sort() } : {}),
    ...(found.includes('git') ? { git: { worktree: true } } : {}),
  }
  const notFound = needs.exec.filter((need) => need.path === undefined).map((need) => need.name)
  return { suggested, notFound: notFound.sort(), missingFiles: [...needs.paths].sort() }
}

async function readRequires(file: string): Promise<ContextRequires> {
  const text = await readSmallFile(file)
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`)
  }
  const body =
    json !== null && typeof json === 'object' && 'contextRequires' in json ? json.contextRequires : json
  const parsed = ContextRequires.safeParse(body ?? {})
  if (!parsed.success)
    throw new UsageError(
      `${file}: not a contextRequires (nor a definition with one): ${parsed.error.issues[0]?.message}`,
    )
  return parsed.data
}

// Used and not declared; declared and not used. A file counts as declared when a pattern matches it or
// names a directory it is in.
function compare(learned: Learned, declared: ContextRequires): NonNullable<Learned['against']> {
  const usedExec = [...(learned.suggested.exec ?? []), ...learned.notFound]
  const files = [...new Set([...(learned.suggested.paths ?? []), ...learned.missingFiles])]
  const plans = (declared.paths ?? []).map((pattern) => ({ pattern, plan: planPattern(pattern) }))
  const covers = (plan: ReturnType<typeof planPattern>, file: string) =>
    plan.glob
      ? plan.matches(file.replace(/\/$/, ''))
      : file === plan.path || file.startsWith(`${plan.path}/`) || `${plan.path}/` === file
  const declaredExec = new Set(declared.exec ?? [])
  if (declared.git) declaredExec.add('git')
  const undeclared: ContextRequires = {
    paths: files.filter((file) => !plans.some(({ plan }) => covers(plan, file))),
    exec: usedExec.filter((name) => !declaredExec.has(name)),
  }
  const unused: ContextRequires = {
    paths: plans
      .filter(({ plan }) => !files.some((file) => covers(plan, file)))
      .map(({ pattern }) => pattern),
    exec: (declared.exec ?? []).filter((name) => !usedExec.includes(name)),
    ...(declared.git && !usedExec.includes('git') ? { git: declared.git } : {}),
  }
  return { undeclared: compact(undeclared), unused: compact(unused) }
}

const compact = (r: ContextRequires): ContextRequires =>
  Object.fromEntries(
    Object.entries(r).filter(([, v]) => !(Array.isArray(v) && v.length === 0)),
  ) as ContextRequires
const isEmpty = (r: ContextRequires) => Object.keys(r).length === 0

function text(l: Learned): string {
  const out: string[] = []
  if ('trace' in l.from)
    out.push(`ran: ${l.from.trace.command.join(' ')} (exit ${l.from.trace.exitCode}), traced`)
  else
    out.push(
      `dispatch ${l.from.dispatch}, as its worker observed it (${l.from.source})${l.from.source === 'output' ? ': read from its output, the agent’s own word' : ''}`,
    )
  out.push('suggested contextRequires:', JSON.stringify(l.suggested, null, 2))
  if ('dispatch' in l.from)
    out.push('(a dispatch keeps the files that were not there, not those read: no paths)')
  if (l.notFound.length > 0) out.push(`not found on any PATH entry: ${l.notFound.join(', ')}`)
  if (l.missingFiles.length > 0) out.push(`opened and not there: ${l.missingFiles.join(', ')}`)
  if (l.against) {
    out.push(`used, and declared by no requirement: ${listed(l.against.undeclared)}`)
    out.push(`declared, and never used: ${listed(l.against.unused)}`)
  }
  // names and paths are what a program (or a remote agent, with --from) chose: their controls escaped
  return `${out.join('\n').split('\n').map(visible).join('\n')}\n`
}

const listed = (r: ContextRequires) =>
  isEmpty(r)
    ? 'nothing'
    : Object.entries(r)
        .map(([kind, v]) => `${kind} ${Array.isArray(v) ? v.join(', ') : JSON.stringify(v)}`)
        .join('; ')
