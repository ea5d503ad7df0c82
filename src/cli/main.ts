// The `preflight` CLI: commander parses the command line from the table in commands.ts (flags, help,
// suggestions), then the chosen command's module is imported and run with the parsed values.
import { readFileSync } from 'node:fs'
import { Command, CommanderError, Option } from 'commander'
import { flushLogs } from '../log/gather.js'
import { processOutputDeps, watchOutput } from './closed-output.js'
import { COMMANDS, type Flag, type Spec, type Values } from './commands.js'
import { DURATION_FORMS } from './duration.js'
import { UsageError } from './errors.js'

const GLOBAL_ENV = { PREFLIGHT_DEBUG: 'print the stack of an unexpected error' }
const DURATIONS = `Durations:\n  milliseconds (60000), or a whole number with a unit: ${DURATION_FORMS}`

interface Chosen {
  spec: Spec
  values: Values<Record<string, { arg: string; help: string }>>
  args: string[]
}

// Parses and runs; bad input throws a UsageError, a fault whatever the command threw. `ran` is told
// the command's spec before it runs.
export async function execute(argv: string[], ran: (spec: Spec) => void = () => {}): Promise<number> {
  let chosen: Chosen | undefined
  const program = build((c) => {
    chosen = c
  })
  try {
    program.parse(argv, { from: 'user' })
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err
    // --help and --version were answered on stdout
    if (err.exitCode === 0) return 0
    if (err.code === 'commander.help') throw new UsageError(needsCommand(argv))
    throw new UsageError(oneLine(err.message))
  }
  if (!chosen?.spec.run) throw new UsageError(needsCommand(argv))
  ran(chosen.spec)
  return chosen.spec.run(chosen.values, chosen.args)
}

// Runs the command and answers its exit code. Run as the process itself (`ownsProcess`: the binary,
// never a test that runs commands in its own process), a closed stdout or stderr ends it quietly
// with 141 (closed-output.ts), and a command with `exitWithinMs` (a service: its log's reader may
// stall) ends the process with that code at most that long after it returned, whatever output is
// still waiting to be written.
export async function main(argv: string[], { ownsProcess = false } = {}): Promise<number> {
  let running = true
  const output = ownsProcess ? watchOutput(processOutputDeps(() => running)) : undefined
  let exitWithinMs: number | undefined
  const returned = await outcome(argv, (spec) => {
    exitWithinMs = spec.exitWithinMs
  })
  running = false
  // a command stopped because its output broke answers for the output, not for the stop
  const code = output?.code() ?? returned
  if (ownsProcess && exitWithinMs !== undefined) exitWithin(code, exitWithinMs)
  return code
}

// Output waiting for a reader (a pipe nobody reads) keeps the event loop, and so the process, alive:
// it gets `ms` to be written, then the process exits. The timer holds nothing up when it drains sooner.
function exitWithin(code: number, ms: number): void {
  setTimeout(() => process.exit(code), ms).unref()
}

// Bad input is one sentence on stderr and exit 2; anything else is a fault: one line, exit 1.
async function outcome(argv: string[], ran: (spec: Spec) => void): Promise<number> {
  try {
    return await execute(argv, ran)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`preflight: ${err.message}\n`)
      return 2
    }
    const message = err instanceof Error ? err.message : String(err)
    // the log lines that led to it first
    flushLogs()
    process.stderr.write(`preflight: ${message}\n`)
    if (process.env.PREFLIGHT_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`)
    return 1
  }
}

function build(choose: (c: Chosen) => void): Command {
  const program = new Command('preflight')
    .description('Worker-side preflight verification for coding-agent jobs')
    .version(version(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [COMMAND]', 'show help for a command')
    // errors become a UsageError (one line), not commander's own output and exit
    .exitOverride()
    .configureOutput({ writeErr: () => {}, outputError: () => {} })
    .addHelpText(
      'after',
      `\n${section('Environment', GLOBAL_ENV)}\n\nExample:\n  $ preflight check --help\n\n` +
        section('Exit codes', { 0: 'success', 1: 'failure (see the command)', 2: 'bad input' }),
    )
  for (const [name, spec] of Object.entries(COMMANDS)) addCommand(program, name, spec, choose)
  return program
}

function addCommand(parent: Command, name: string, spec: Spec, choose: (c: Chosen) => void): void {
  const cmd = parent.command(name).description(spec.summary).helpOption('-h, --help', 'show help')
  for (const arg of spec.args ?? []) cmd.argument(arg)
  const names = new Map<string, string>()
  for (const [flag, f] of Object.entries(spec.flags ?? {})) {
    const name = `${f.short ? `-${f.short}, ` : ''}--${flag}`
    const option = new Option(f.arg ? `${name} <${f.arg}>` : name, helpOf(f))
    if (f.many)
      option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    if (f.hidden) option.hideHelp()
    cmd.addOption(option)
    names.set(flag, option.attributeName())
  }
  for (const [sub, subSpec] of Object.entries(spec.commands ?? {})) addCommand(cmd, sub, subSpec, choose)
  const after = [
    // the `…-ms` flags take a duration (args.ts durationFlag)
    Object.keys(spec.flags ?? {}).some((flag) => flag.endsWith('-ms')) ? DURATIONS : '',
    section('Environment', { ...environmentOf(spec), ...GLOBAL_ENV }),
    spec.example ? `Example:\n  $ ${spec.example}` : '',
    spec.exits ? section('Exit codes', spec.exits) : '',
  ].filter(Boolean)
  cmd.addHelpText('after', `\n${after.join('\n\n')}`)
  if (spec.run) {
    cmd.action(() => {
      const opts = cmd.opts()
      const values: Chosen['values'] = {}
      for (const [flag, key] of names) if (opts[key] !== undefined) values[flag] = opts[key]
      choose({ spec, values, args: cmd.processedArgs as string[] })
    })
  }
}

// A flag's help line: what it is, then what applies when it is not given (`default: 8080; env:
// PREFLIGHT_PORT, PORT` — the variables in the order they are read).
function helpOf(f: Flag): string {
  const fallback = [
    ...(f.default === undefined ? [] : [`default: ${f.default}`]),
    ...(f.env ? [`env: ${f.env.join(', ')}`] : []),
  ]
  return fallback.length === 0 ? f.help : `${f.help} (${fallback.join('; ')})`
}

// The variables a command reads: those of its flags (and of its subcommands' flags), then its own.
function environmentOf(spec: Spec): Record<string, string> {
  const rows: Record<string, string> = {}
  for (const [flag, f] of Object.entries(spec.flags ?? {}))
    (f.env ?? []).forEach((name, i) => {
      rows[name] =
        i === 0
          ? `--${flag} when not given`
          : `--${flag} when neither it nor ${f.env?.slice(0, i).join(' nor ')} is given`
    })
  for (const sub of Object.values(spec.commands ?? {})) Object.assign(rows, environmentOf(sub))
  return { ...rows, ...spec.env }
}

function section(title: string, rows: Record<string, string>): string {
  const width = Math.max(...Object.keys(rows).map((k) => k.length))
  return `${title}:\n${Object.entries(rows)
    .map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)
    .join('\n')}`
}

// "error: unknown option '--fsat'\n(Did you mean --fast?)" → "unknown option '--fsat'; did you mean --fast?"
function oneLine(message: string): string {
  return message
    .replace(/^error: /, '')
    .replace(/\s*\n\(Did you mean (.*)\?\)/, '; did you mean $1?')
    .replace(/\s*\n\s*/g, ' ')
}

// A command that needs a subcommand was given none: name the ones it has.
function needsCommand(argv: string[]): string {
  const path: string[] = []
  let spec: Spec = { summary: '', commands: COMMANDS }
  for (const word of argv) {
    const next = spec.commands?.[word]
    if (!next) break
    path.push(word)
    spec = next
  }
  const said = ['preflight', ...path].join(' ')
  return `give a command: ${said} ${Object.keys(spec.commands ?? {}).join('|')}; see "${said} --help"`
}

// The version in package.json, found upward from this file (dist/src/cli or src/cli).
function version(): string {
  for (let dir = new URL('.', import.meta.url); dir.pathname !== '/'; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as Record<string, unknown>
      if (pkg.name === 'preflight') return String(pkg.version)
    } catch {}
  }
  return 'unknown'
}
