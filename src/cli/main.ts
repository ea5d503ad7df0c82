// The `preflight` CLI: dispatches to one module per subcommand, each exporting `run(args)`.
import { UsageError } from './errors.js'

type Command = { run(args: string[]): Promise<number> }

const commands: Record<string, () => Promise<Command>> = {
  check: () => import('./check.js'),
  coordinator: () => import('./coordinator.js'),
  worker: () => import('./worker.js'),
  migrate: () => import('./migrate.js'),
  token: () => import('./token.js'),
  reports: () => import('./reports.js'),
  dispatches: () => import('./dispatches.js'),
  explain: () => import('./explain.js'),
}

const USAGE = `usage: preflight <command> [options]

commands:
  check        verify a workspace against contextRequires (exit 0 met, 1 unmet/error, 2 bad input)
  coordinator  run the HTTP coordinator (embedded PGlite under ./.preflight when no database URL)
  worker       claim and run dispatches from a coordinator
  migrate      apply database migrations
  token        API tokens: token create --role R, token list, token revoke ID
  reports      list preflight reports from a coordinator
  dispatches   dispatches list, show ID, wait ID, cancel ID, watch: why dispatches ended, and as they end
  explain      explain REASON: what a reason code means and what to look at`

export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return name ? 0 : 2
  }
  const load = commands[name]
  if (!load) return fail(new UsageError(`unknown command "${name}"; run "preflight --help" for the list`))
  try {
    return await (await load()).run(args)
  } catch (err) {
    return fail(err)
  }
}

// Bad input is one sentence on stderr and exit 2; anything else is a fault: one line, exit 1.
function fail(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`preflight: ${err.message}\n`)
    return 2
  }
  const message = err instanceof Error ? err.message : String(err)
  process.stderr.write(`preflight: ${message}\n`)
  if (process.env.PREFLIGHT_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`)
  return 1
}
