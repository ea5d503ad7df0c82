// Every command of the `preflight` CLI as data: its flags, arguments, environment, example and exit
// codes (main.ts turns them into the parser and the --help pages), and how to run it. A command's
// module is imported only when that command runs, so `preflight --version` or `--help` loads none,
// and `check` loads only the checks. Adding a flag: one line in its table (flags.ts), then read it in
// the module.
import {
  API_FLAGS,
  APPLY_FLAGS,
  CANCEL_FLAGS,
  CHECK_FLAGS,
  COORDINATOR_FLAGS,
  CREATE_FLAGS,
  DB_FLAGS,
  type Flags,
  LEARN_FLAGS,
  LIST_FLAGS,
  REPORTS_FLAGS,
  RETRY_FLAGS,
  TOKEN_CREATE_FLAGS,
  TOKEN_FLAGS,
  TOKEN_LIST_FLAGS,
  type Values,
  WAIT_FLAGS,
  WATCH_FLAGS,
  WORKER_FLAGS,
} from './flags.js'

export type { Flag, Flags, Values } from './flags.js'

export interface Spec<F extends Flags = Flags> {
  summary: string
  // positional arguments, as commander writes them: '<ID>', '[FILE]'
  args?: string[]
  flags?: F
  env?: Record<string, string>
  example?: string
  exits?: Record<number, string>
  run?: (values: Values<F>, args: string[]) => Promise<number>
  // a service: once run returned, the process exits within this many ms, whatever output still waits
  exitWithinMs?: number
  commands?: Record<string, Spec>
}

// Keeps the flags' literal types so that `run` sees its values typed.
const command = <const F extends Flags>(spec: Spec<F>): Spec => spec as unknown as Spec

const USAGE_EXIT = 'bad input (unknown flag, bad value, unreadable file): one line on stderr'
const API_EXITS = {
  0: 'done',
  1: 'the coordinator could not be reached or refused (401, 403, 5xx): one line on stderr',
  2: USAGE_EXIT,
}
const DB_EXITS = { 0: 'done', 1: 'the database failed: one line on stderr', 2: USAGE_EXIT }

// The variables that colour text output (log/colour.ts wantsColour), for the commands that print it.
const colourEnv = {
  NO_COLOR: 'no colour in text output when set',
  FORCE_COLOR: 'colour even off a terminal (unless 0 or false)',
}

const check = command({
  summary: 'verify a workspace against contextRequires, with this process’s environment as the agent’s',
  flags: CHECK_FLAGS,
  env: {
    PATH: 'where exec requirements are looked up (this process’s environment is the agent’s)',
    ...colourEnv,
  },
  example: 'preflight check --workspace . --requires requires.json --format junit --output preflight.xml',
  exits: { 0: 'every requirement met', 1: 'a requirement unmet or in error', 2: USAGE_EXIT },
  // as root without --as-uid, the text report ends with a note: root's view is not an agent's
  run: async (values) => (await import('./check.js')).run(values),
})

const learn = command({
  summary: 'run a command under the tracer and suggest the contextRequires it needs (or read a dispatch’s)',
  args: ['[COMMAND...]'],
  flags: LEARN_FLAGS,
  env: { PATH: 'where the command’s programs are looked up', PREFLIGHT_TOKEN: 'the token, with --from' },
  example: 'preflight learn --against subagent.json -- npm test',
  exits: {
    0: 'suggested (with --against: the definition declares all that was used)',
    1: 'with --against, something used is declared by no requirement; or no tracer, or the coordinator refused',
    2: USAGE_EXIT,
  },
  run: async (values, args) => (await import('./learn.js')).run(values, args),
})

const coordinator = command({
  summary: 'run the HTTP coordinator (embedded PGlite under ./.preflight when no database URL)',
  flags: COORDINATOR_FLAGS,
  env: {
    PREFLIGHT_BOOTSTRAP_TOKENS: 'role:token pairs, comma-separated, kept in the database at start',
    PREFLIGHT_METRICS_TOKEN: 'bearer token that may read /metrics',
  },
  example: 'DATABASE_URL=postgres://localhost/preflight preflight coordinator --port 8080',
  exits: { 0: 'stopped by SIGINT or SIGTERM', 1: 'a fault (database, port in use)', 2: USAGE_EXIT },
  run: async (values) => (await import('./coordinator.js')).run(values),
})

// How long a stopped worker's pending log output (up to 8 MiB of setup's and agents' lines on stdout,
// its own records on stderr) may take to be written before the process exits: a live reader takes 8 MiB
// in well under a second; one that stalls (a log driver, a shipper) must not keep the worker alive
// until the grace period of its container runs out (docs/worker.md, "SIGTERM / SIGINT").
export const WORKER_FLUSH_MS = 3_000

const worker = command({
  summary: 'claim and run dispatches from a coordinator',
  flags: WORKER_FLAGS,
  env: {
    PREFLIGHT_TOKEN: 'the worker token when --token-file is not given (removed from the environment)',
    PREFLIGHT_IMAGE: 'the image name reported with each result',
    PATH: 'where the worker finds its git',
  },
  example: 'PREFLIGHT_TOKEN=… preflight worker --coordinator http://127.0.0.1:8080 --agent-uid 20000',
  exits: {
    0: 'stopped by SIGINT or SIGTERM, after --max-dispatches, or idle for --exit-when-idle',
    1: 'a fault',
    2: USAGE_EXIT,
  },
  run: async (values) => (await import('./worker.js')).run(values),
  exitWithinMs: WORKER_FLUSH_MS,
})

const migrate = command({
  summary: 'apply database migrations (safe twice and concurrently)',
  flags: DB_FLAGS,
  example: 'DATABASE_URL=postgres://localhost/preflight preflight migrate',
  exits: DB_EXITS,
  run: async (values) => (await import('./migrate.js')).run(values),
})

const token = {
  summary: 'API tokens in the database (or through a coordinator with --coordinator): create, list, revoke',
  example: 'preflight token create --role worker --label ci-runner',
  exits: DB_EXITS,
  commands: {
    create: command({
      summary: 'create a token and print it once (only its hash is kept)',
      flags: TOKEN_CREATE_FLAGS,
      example: 'preflight token create --role orchestrator --label ci --expires-in 90d',
      exits: DB_EXITS,
      run: async (values) => (await import('./token.js')).create(values),
    }),
    list: command({
      summary: 'list every token, never its secret',
      flags: TOKEN_LIST_FLAGS,
      example: 'preflight token list --format json',
      exits: DB_EXITS,
      run: async (values) => (await import('./token.js')).list(values),
    }),
    revoke: command({
      summary: 'revoke a token, at once on every running coordinator',
      args: ['<ID>'],
      flags: TOKEN_FLAGS,
      example: 'preflight token revoke 3',
      exits: { ...DB_EXITS, 1: 'no token with that id, or the database failed' },
      run: async (values, [id]) => (await import('./token.js')).revoke(values, id as string),
    }),
  },
} satisfies Spec

const reports = command({
  summary: 'list preflight reports from a coordinator (every page, newest first)',
  flags: REPORTS_FLAGS,
  env: colourEnv,
  example: 'preflight reports --coordinator http://127.0.0.1:8080 --outcome unmet --limit 20',
  exits: API_EXITS,
  run: async (values) => (await import('./reports.js')).run(values),
})

const dispatches = {
  summary:
    'dispatches: a new one, why they ended, one in full, waiting for one, a cancel, and endings as they happen',
  example: 'preflight dispatches list --status failed --limit 20',
  exits: API_EXITS,
  commands: {
    create: command({
      summary: 'queue a dispatch of a registered subagent and print its id',
      flags: CREATE_FLAGS,
      env: colourEnv,
      example:
        'preflight dispatches create --subagent frontend-fixer --repo https://git.example.com/app.git --wait',
      exits: {
        ...API_EXITS,
        0: 'queued (with --wait: it succeeded)',
        1: 'with --wait: it ended otherwise; or the coordinator could not be reached or refused',
        2: 'bad input: a bad flag, a subagent not registered, an idempotency key used for another request',
      },
      run: async (values) => (await import('./dispatches-create.js')).create(values),
    }),
    list: command({
      summary: 'list dispatches newest first, with why each ended',
      flags: LIST_FLAGS,
      env: colourEnv,
      example: 'preflight dispatches list --status failed --since 2026-01-01T00:00:00Z',
      exits: API_EXITS,
      run: async (values) => (await import('./dispatches.js')).list(values),
    }),
    show: command({
      summary: 'one dispatch in full: events, report, setup output, completion',
      args: ['<ID>'],
      flags: API_FLAGS,
      env: colourEnv,
      example: 'preflight dispatches show 0b6c3f9e-8d1a-4c47-9a57-3f0e5f1f2a11',
      exits: API_EXITS,
      run: async (values, [id]) => (await import('./dispatches.js')).show(values, id as string),
    }),
    wait: command({
      summary: 'wait until a dispatch has ended, then print it in full',
      args: ['<ID>'],
      flags: WAIT_FLAGS,
      env: colourEnv,
      example: 'preflight dispatches wait 0b6c3f9e-8d1a-4c47-9a57-3f0e5f1f2a11 --timeout-ms 600000',
      exits: {
        ...API_EXITS,
        0: 'it succeeded',
        1: 'it ended otherwise, or a fault',
        3: '--timeout-ms passed first (printed as it stands)',
      },
      run: async (values, [id]) => (await import('./dispatches.js')).wait(values, id as string),
    }),
    cancel: command({
      summary: 'cancel a dispatch that has not ended (queued, claimed or running)',
      args: ['<ID>'],
      flags: CANCEL_FLAGS,
      env: colourEnv,
      example: "preflight dispatches cancel 0b6c3f9e-8d1a-4c47-9a57-3f0e5f1f2a11 --why 'task abandoned'",
      exits: { ...API_EXITS, 1: 'not cancelled (no such dispatch, it has ended) or a fault' },
      run: async (values, [id]) => (await import('./dispatches.js')).cancel(values, id as string),
    }),
    retry: command({
      summary: 'queue an ended dispatch again: its definition version, workspace, labels and priority',
      args: ['<ID>'],
      flags: RETRY_FLAGS,
      env: colourEnv,
      example: 'preflight dispatches retry 0b6c3f9e-8d1a-4c47-9a57-3f0e5f1f2a11',
      exits: { ...API_EXITS, 1: 'not queued (no such dispatch, it has not ended) or a fault' },
      run: async (values, [id]) => (await import('./dispatches.js')).retry(values, id as string),
    }),
    watch: command({
      summary: 'print each dispatch as it ends (by default the failures) until stopped',
      flags: WATCH_FLAGS,
      env: colourEnv,
      example: 'preflight dispatches watch --format json --count 1',
      exits: { ...API_EXITS, 0: 'stopped by SIGINT or SIGTERM, or after --count' },
      run: async (values) => (await import('./dispatches.js')).watch(values),
    }),
  },
} satisfies Spec

const subagents = {
  summary: 'subagent definitions: register one from a file',
  example: 'preflight subagents apply -f frontend-fixer.yaml',
  exits: API_EXITS,
  commands: {
    apply: command({
      summary: 'register a definition (JSON or YAML) and say whether its version is new or unchanged',
      flags: APPLY_FLAGS,
      example: 'preflight subagents apply -f frontend-fixer.yaml',
      exits: {
        0: 'registered: a new version, or the same definition again (unchanged)',
        1: API_EXITS[1],
        2: 'bad input: a bad flag, a file that does not parse, a definition the coordinator refused (its message)',
      },
      run: async (values) => (await import('./subagents.js')).apply(values),
    }),
  },
} satisfies Spec

const explain = command({
  summary: 'what a reason code or dispatch status means and what to look at',
  args: ['<REASON>'],
  env: colourEnv,
  example: 'preflight explain not-a-worktree',
  exits: { 0: 'explained', 2: 'an unknown code (the nearest ones named) or bad input' },
  run: async (_values, [code]) => (await import('./explain.js')).run(code as string),
})

export const COMMANDS: Record<string, Spec> = {
  check,
  coordinator,
  worker,
  migrate,
  token,
  subagents,
  reports,
  dispatches,
  explain,
  learn,
}
