// `preflight check`: the worker's verifier run by hand on a workspace, with this process's environment as the agent's.
import { readFileSync, statSync } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { z } from 'zod'
import { verify } from '../../worker/checks/index.js'
import { agentEnvironment } from '../../worker/env.js'
import type { CheckReport, ContextRequires } from '../contract/index.js'
import { plainRequires } from '../contract/light.js'
import { wantsColour } from '../log/colour.js'
import { durationFlag, say } from './args.js'
import { FORMATS, type Format, render } from './check-format.js'
import type { CHECK_FLAGS, Values } from './commands.js'
import { UsageError } from './errors.js'
import { nearest } from './nearest.js'

type CheckFlags = Values<typeof CHECK_FLAGS>

interface CheckArgs {
  workspace: string
  requires: ContextRequires | undefined
  format: Format
  // --output FILE: the report goes there instead of stdout
  output: string | undefined
  timeoutMs: number | undefined
}

export async function run(values: CheckFlags): Promise<number> {
  const parsed = await parseCheckArgs(values)
  const verdict = await verify(parsed.requires, {
    workspace: parsed.workspace,
    env: agentEnvironment(process.env),
    timeoutMs: parsed.timeoutMs,
  })
  const report: CheckReport = { ...verdict, workspace: parsed.workspace }
  if (parsed.output) await writeAtomically(parsed.output, render(report, parsed.format))
  else process.stdout.write(render(report, parsed.format, { colour: wantsColour(process.stdout) }))
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
  }
}

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

// A requirements file is small: anything else (a device, a FIFO, /dev/zero, a huge file) is refused
// before it is read.
const MAX_REQUIRES_BYTES = 1024 * 1024

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
  let text: string
  try {
    const info = statSync(file)
    if (!info.isFile()) throw new UsageError(`${file} is not a regular file`)
    if (info.size > MAX_REQUIRES_BYTES) throw new UsageError(`${file} is larger than 1 MiB`)
    text = readFileSync(file, 'utf8')
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
  }
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
