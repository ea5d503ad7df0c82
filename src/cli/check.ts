// `preflight check`: the worker's verifier run by hand on a workspace, with this process's environment as the agent's.
import { randomBytes } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { z } from 'zod'
import { verify } from '../../worker/checks/index.js'
import { agentEnvironment } from '../../worker/env.js'
import { type CheckReport, ContextRequires, SubagentDefinition } from '../contract/index.js'
import { wantsColour } from '../log/colour.js'
import { intFlag, say } from './args.js'
import { FORMATS, type Format, render } from './check-format.js'
import type { CHECK_FLAGS, Values } from './commands.js'
import { UsageError } from './errors.js'

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
  const parsed = parseCheckArgs(values)
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

function parseCheckArgs(values: CheckFlags): CheckArgs {
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
      ? readJson(values.requires, ContextRequires)
      : readJson(subagentFile as string, SubagentDefinition).contextRequires,
    format: format as Format,
    output: values.output === undefined ? undefined : outputFile(values.output),
    timeoutMs: intFlag(values['timeout-ms'], 'timeout-ms', 1, 3_600_000),
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

function readJson<T extends z.ZodType>(file: string, schema: T): z.infer<T> {
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
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${file} is not valid JSON: ${(err as Error).message}`)
  }
  const parsed = schema.safeParse(json)
  if (parsed.success) return parsed.data
  const [issue] = parsed.error.issues
  const where = issue?.path.length ? issue.path.join('.') : '(top level)'
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : ''
  throw new UsageError(`${file} is not valid at ${where}: ${issue?.message ?? 'invalid'}${more}`)
}
