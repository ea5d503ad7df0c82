// `preflight check`: the worker's verifier run by hand on a workspace, with this process's environment as the agent's.
import { statSync } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { z } from 'zod'
import { type AgentIdentity, verify } from '../../worker/checks/index.js'
import { agentEnvironment } from '../../worker/env.js'
import type { CheckReport, ContextRequires } from '../contract/index.js'
import { plainRequires } from '../contract/light.js'
import { wantsColour } from '../log/colour.js'
import { durationFlag, intFlag, say } from './args.js'
import { FORMATS, type Format, render } from './check-format.js'
import { UsageError } from './errors.js'
import type { CHECK_FLAGS, Values } from './flags.js'
import { readSmallFile } from './input.js'
import { nearest } from './nearest.js'

type CheckFlags = Values<typeof CHECK_FLAGS>

interface CheckArgs {
  workspace: string
  requires: ContextRequires | undefined
  format: Format
  // --output FILE: the report goes there instead of stdout
  output: string | undefined
  timeoutMs: number | undefined
  // --as-uid: judged for this uid (and the same gid) instead of this process's
  agent: AgentIdentity | undefined
}

// The note of a text report judged as root for no other uid: root reads every file, searches every
// directory and runs any file with an x bit, so `met` may not hold for the agent's uid.
export const ROOT_NOTE =
  'note: judged as root, who may reach and run what an agent’s uid may not; --as-uid UID judges as the agent'

// `uid`: this process's (undefined where there are none).
export async function run(values: CheckFlags, uid = process.getuid?.()): Promise<number> {
  const parsed = await parseCheckArgs(values)
  const verdict = await verify(parsed.requires, {
    workspace: parsed.workspace,
    env: agentEnvironment(process.env, []),
    timeoutMs: parsed.timeoutMs,
    // as the worker's verify step judges for its --agent-uid (worker/verify.ts)
    ...(parsed.agent ? { agent: parsed.agent } : {}),
  })
  const report: CheckReport = { ...verdict, workspace: parsed.workspace }
  const note = uid === 0 && parsed.agent === undefined ? ROOT_NOTE : undefined
  if (parsed.output) await writeAtomically(parsed.output, render(report, parsed.format, { note }))
  else process.stdout.write(render(report, parsed.format, { colour: wantsColour(process.stdout), note }))
  return verdict.outcome === 'met' ? 0 : 1
}

// The whole report or none of it: written beside the file, flushed, then renamed over it, so a reader
// (a CI step, a watcher) never sees half a report and an earlier one stays whole until replaced.
async function writeAtomically(file: string, text: string): Promise<void> {
  // node:crypto only here: loading it costs every other run of `check` its start-up
  const { randomBytes } = await import('node:crypto')
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    const handle = await open(temp, 'wx', 0o666)
    try {
      await handle.writeFile(text)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
}

async function parseCheckArgs(values: CheckFlags): Promise<CheckArgs> {
  if (!values.workspace) throw new UsageError('--workspace DIR is required')
  const subagentFile = values['subagent-file'] ?? values.subagent
  const given = [values.requires, values['subagent-file'], values.subagent].filter((v) => v !== undefined)
  if (given.length !== 1) throw new UsageError('give exactly one of --requires FILE or --subagent-file FILE')
  if (values.subagent !== undefined) say('--subagent FILE is deprecated: use --subagent-file FILE')
  const format = values.format ?? 'text'
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${format}"`)
  }
  return {
    workspace: workspaceDir(values.workspace),
    requires: values.requires
      ? await readRequires(values.requires)
      : (await readSubagent(subagentFile as string)).contextRequires,
    format: format as Format,
    output: values.output === undefined ? undefined : outputFile(values.output),
    timeoutMs: durationFlag(values['timeout-ms'], 'timeout-ms', 1, 3_600_000),
    agent: agentOf(intFlag(values['as-uid'], 'as-uid', 0, 2 ** 31 - 2)),
  }
}

// The uid and the gid of the same number, no other groups: how a worker runs its agents (--agent-uid).
const agentOf = (uid: number | undefined): AgentIdentity | undefined =>
  uid === undefined ? undefined : { uid, gid: uid }

function workspaceDir(dir: string): string {
  const abs = resolve(dir)
  let isDir = false
  try {
    isDir = statSync(abs).isDirectory()
  } catch {}
  if (!isDir) throw new UsageError(`--workspace ${dir} is not a directory`)
  return abs
}

// --output FILE: into an existing directory, and not onto a directory.
function outputFile(file: string): string {
  const abs = resolve(file)
  const kind = (path: string) => {
    try {
      return statSync(path).isDirectory() ? 'directory' : 'other'
    } catch {
      return 'none'
    }
  }
  if (kind(dirname(abs)) !== 'directory')
    throw new UsageError(`--output ${file}: its directory does not exist`)
  if (kind(abs) === 'directory') throw new UsageError(`--output ${file} is a directory`)
  return abs
}

// contextRequires read without zod when it is plainly valid (the common case: loading zod would double
// the command's start-up); otherwise the contract's schema decides and says why.
async function readRequires(file: string): Promise<ContextRequires | undefined> {
  const json = readJson(file)
  const plain = plainRequires(json)
  if (plain) return plain
  return validated(file, json, (await import('../contract/requirements.js')).ContextRequires)
}

async function readSubagent(file: string) {
  return validated(file, readJson(file), (await import('../contract/definition.js')).SubagentDefinition)
}

function readJson(file: string): unknown {
  const text = readSmallFile(file)
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${file} is not valid JSON: ${(err as Error).message}`)
  }
}

// The schema's data, or its first issue as one sentence; a key it does not know names the nearest it does.
function validated<T extends z.ZodType>(file: string, json: unknown, schema: T): z.infer<T> {
  const parsed = schema.safeParse(json)
  if (parsed.success) return parsed.data
  const [issue] = parsed.error.issues
  const where = issue?.path.length ? issue.path.join('.') : '(top level)'
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : ''
  const hint = issue?.code === 'unrecognized_keys' ? suggestion(issue.keys, keysAt(schema, issue.path)) : ''
  throw new UsageError(`${file} is not valid at ${where}: ${issue?.message ?? 'invalid'}${hint}${more}`)
}

function suggestion(unknown: string[], known: string[]): string {
  const near = unknown.flatMap((key) => nearest(key, known, 1))
  return near.length > 0 ? `; did you mean ${near.map((k) => `"${k}"`).join(', ')}?` : ''
}

// The keys the schema knows for the object at `path` (through optional wrappers).
function keysAt(schema: z.ZodType, path: PropertyKey[]): string[] {
  const unwrap = (s: unknown) => {
    let inner = s as { unwrap?: () => unknown; shape?: Record<string, unknown> } | undefined
    while (inner && typeof inner.unwrap === 'function' && !inner.shape) inner = inner.unwrap() as typeof inner
    return inner
  }
  let at = unwrap(schema)
  for (const key of path) at = unwrap(at?.shape?.[String(key)])
  return Object.keys(at?.shape ?? {})
}
