// Every command of the `preflight` CLI as data: its flags, arguments, environment, example and exit
// codes (main.ts turns them into the parser and the --help pages), and how to run it. A command's
// module is imported only when that command runs, so `preflight --version` or `--help` loads none,
// and `check` loads only the checks. Adding a flag: one line in `flags`, then read it in the module.
import { defaultConfig } from '../../worker/config.js'
import { formatDuration } from './duration.js'

// A flag: with `arg`, it takes a value (`many`: may repeat, collected in order); without, it is a switch.
export interface Flag {
  arg?: string
  many?: true
  help: string
  // kept working but not listed (an old spelling)
  hidden?: true
}
export type Flags = Record<string, Flag>

// The values a command's module receives, keyed by the flag's name as typed (`timeout-ms`).
export type Values<F extends Flags> = {
  [K in keyof F]?: F[K] extends { arg: string } ? (F[K] extends { many: true } ? string[] : string) : boolean
}

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

export const API_FLAGS = {
  coordinator: { arg: 'URL', help: 'the coordinator (else PREFLIGHT_COORDINATOR, else PREFLIGHT_URL)' },
  token: { arg: 'T', help: 'bearer token (else PREFLIGHT_TOKEN)' },
  format: { arg: 'FORMAT', help: 'text (default) or json' },
} as const satisfies Flags
const apiEnv = {
  PREFLIGHT_COORDINATOR: 'the coordinator URL when --coordinator is not given',
  PREFLIGHT_URL: 'the same, read when PREFLIGHT_COORDINATOR is not set',
  PREFLIGHT_TOKEN: 'the bearer token when --token is not given',
}
export const DB_FLAGS = {
  'database-url': { arg: 'URL', help: 'postgres:// URL (else DATABASE_URL, else embedded PGlite)' },
  'data-dir': { arg: 'DIR', help: 'where embedded PGlite keeps its data (default ./.preflight)' },
} as const satisfies Flags
const dbEnv = { DATABASE_URL: 'PostgreSQL URL when --database-url is not given' }
const logFlags = {
  'log-level': { arg: 'LEVEL', help: 'trace, debug, info (default), warn, error, fatal or silent' },
  'log-format': { arg: 'FORMAT', help: 'json or pretty (default: pretty on a terminal, else json)' },
} as const satisfies Flags
const logEnv = {
  PREFLIGHT_LOG_LEVEL: 'the log level when --log-level is not given',
  PREFLIGHT_LOG_FORMAT: 'the log format when --log-format is not given',
}
export const FILTER_FLAGS = {
  status: { arg: 'STATUS', many: true, help: 'only dispatches in this status (repeatable)' },
  subagent: { arg: 'NAME', help: 'only dispatches of this subagent' },
  worker: { arg: 'ID', help: 'only dispatches claimed by this worker' },
  reason: { arg: 'CODE', help: 'only dispatches that ended for this reason' },
  since: { arg: 'TIME', help: 'only dispatches that ended at or after this ISO 8601 time' },
} as const satisfies Flags

export const CHECK_FLAGS = {
  workspace: { arg: 'DIR', help: 'the workspace to check (required)' },
  requires: { arg: 'FILE', help: 'a contextRequires JSON file' },
  'subagent-file': { arg: 'FILE', help: 'a subagent definition JSON file: its contextRequires' },
  subagent: { arg: 'FILE', help: 'old spelling of --subagent-file', hidden: true },
  format: { arg: 'FORMAT', help: 'text (default), json or junit' },
  output: { arg: 'FILE', help: 'write the report to FILE (whole or not at all) instead of stdout' },
  'timeout-ms': { arg: 'DURATION', help: 'bound of each check, up to 1h (default 10s)' },
} as const satisfies Flags

const check = command({
  summary: 'verify a workspace against contextRequires, with this process’s environment as the agent’s',
  flags: CHECK_FLAGS,
  env: {
    PATH: 'where exec requirements are looked up (this process’s environment is the agent’s)',
    NO_COLOR: 'no colour in text output when set',
    FORCE_COLOR: 'colour even off a terminal (unless 0 or false)',
  },
  example: 'preflight check --workspace . --requires requires.json --format junit --output preflight.xml',
  exits: { 0: 'every requirement met', 1: 'a requirement unmet or in error', 2: USAGE_EXIT },
  run: async (values) => (await import('./check.js')).run(values),
})

export const COORDINATOR_FLAGS = {
  port: { arg: 'N', help: 'port to listen on (else PREFLIGHT_PORT, else PORT, else 8080)' },
  host: { arg: 'HOST', help: 'address to listen on (default: all interfaces)' },
  ...DB_FLAGS,
  'lease-ms': { arg: 'DURATION', help: 'claim lease, 100ms to 1d (else PREFLIGHT_LEASE_MS)' },
  'max-attempts': { arg: 'N', help: 'attempts before a dispatch expires (else PREFLIGHT_MAX_ATTEMPTS)' },
  'sweep-ms': { arg: 'DURATION', help: 'interval of the lease sweeper' },
  'claim-wait-cap-ms': { arg: 'DURATION', help: 'longest long-poll a claim may ask for' },
  'priority-aging-ms': {
    arg: 'DURATION',
    help: 'a dispatch queued this long is claimed before newer ones, whatever their priority (default 5m)',
  },
  'statement-timeout-ms': { arg: 'DURATION', help: 'bound of each SQL statement' },
  'request-timeout-ms': { arg: 'DURATION', help: 'bound of each HTTP request' },
  'max-connections': { arg: 'N', help: 'HTTP connections open at once (default 4096)' },
  'headers-timeout-ms': { arg: 'DURATION', help: 'bound of a request sending its headers (default 10s)' },
  'receive-timeout-ms': {
    arg: 'DURATION',
    help: 'bound of a request sending headers and body (default 30s)',
  },
  'keep-alive-timeout-ms': { arg: 'DURATION', help: 'how long an idle connection is kept (default 65s)' },
  'long-polls-per-token': { arg: 'N', help: 'long-polls one token may hold at once (default 128)' },
  'streams-per-token': { arg: 'N', help: 'event streams one token may hold at once (default 20)' },
  ...logFlags,
} as const satisfies Flags

const coordinator = command({
  summary: 'run the HTTP coordinator (embedded PGlite under ./.preflight when no database URL)',
  flags: COORDINATOR_FLAGS,
  env: {
    PREFLIGHT_PORT: 'port when --port is not given',
    PORT: 'port when neither --port nor PREFLIGHT_PORT is given',
    ...dbEnv,
    PREFLIGHT_BOOTSTRAP_TOKENS: 'role:token pairs, comma-separated, kept in the database at start',
    PREFLIGHT_METRICS_TOKEN: 'bearer token that may read /metrics',
    PREFLIGHT_LEASE_MS: 'claim lease when --lease-ms is not given',
    PREFLIGHT_MAX_ATTEMPTS: 'attempts when --max-attempts is not given',
    ...logEnv,
  },
  example: 'DATABASE_URL=postgres://localhost/preflight preflight coordinator --port 8080',
  exits: { 0: 'stopped by SIGINT or SIGTERM', 1: 'a fault (database, port in use)', 2: USAGE_EXIT },
  run: async (values) => (await import('./coordinator.js')).run(values),
})

export const WORKER_FLAGS = {
  coordinator: API_FLAGS.coordinator,
  token: { arg: 'T', help: 'refused: a command line is readable by every local user' },
  'token-file': { arg: 'FILE', help: 'file holding the worker token (else PREFLIGHT_TOKEN)' },
  'agent-uid': { arg: 'UID', help: 'run setup and agents as UID+slot (needs root or CAP_SETUID)' },
  label: { arg: 'LABEL', many: true, help: 'a label dispatches may ask for (repeatable)' },
  workdir: { arg: 'DIR', help: 'where workspaces are made (else PREFLIGHT_WORKDIR, else a temp dir)' },
  concurrency: { arg: 'N', help: `dispatches run at once, 1 to 256 (default ${defaultConfig.concurrency})` },
  'pass-env': { arg: 'NAME', many: true, help: 'pass this variable to setup and agents (repeatable)' },
  'workspace-root': { arg: 'DIR', many: true, help: 'a directory local workspaces may be in' },
  'keep-failed': { help: 'keep the workspace of a dispatch that failed' },
  'allow-local-repos': { help: 'accept repositories given as local paths' },
  'worker-id': { arg: 'ID', help: 'this worker’s name (default host-pid)' },
  'grace-ms': {
    arg: 'DURATION',
    help: `how long a stop waits for running dispatches (default ${formatDuration(defaultConfig.graceMs)})`,
  },
  'wait-ms': {
    arg: 'DURATION',
    help: `long-poll wait of a claim, up to 10m (default ${formatDuration(defaultConfig.waitMs)})`,
  },
  'setup-timeout-ms': {
    arg: 'DURATION',
    help: `bound of a setup script (default ${formatDuration(defaultConfig.setupTimeoutMs)})`,
  },
  'check-timeout-ms': {
    arg: 'DURATION',
    help: `bound of each check (default ${formatDuration(defaultConfig.checkTimeoutMs)})`,
  },
  'clone-timeout-ms': {
    arg: 'DURATION',
    help: `bound of a clone (default ${formatDuration(defaultConfig.cloneTimeoutMs)})`,
  },
  'agent-timeout-ms': {
    arg: 'DURATION',
    help: 'bound of an agent, up to 1d (default: none; its lease is renewed while it runs)',
  },
  'max-dispatches': { arg: 'N', help: 'stop after this many dispatches' },
  'repo-allow': { arg: 'PATTERN', many: true, help: 'repositories that may be cloned (repeatable)' },
  'git-credentials': { arg: 'FILE', help: 'git credential store for clones' },
  'ssh-key': { arg: 'FILE', help: 'SSH key for clones (with --ssh-known-hosts)' },
  'ssh-known-hosts': { arg: 'FILE', help: 'known_hosts for SSH clones (with --ssh-key)' },
  'metrics-port': { arg: 'N', help: 'serve Prometheus metrics on this port' },
  'metrics-host': { arg: 'HOST', help: 'address of the metrics server (default 127.0.0.1)' },
  ...logFlags,
} as const satisfies Flags

// How long a stopped worker's pending log output (up to 8 MiB of setup's and agents' lines on stdout,
// its own records on stderr) may take to be written before the process exits: a live reader takes 8 MiB
// in well under a second; one that stalls (a log driver, a shipper) must not keep the worker alive
// until the grace period of its container runs out (docs/worker.md, "SIGTERM / SIGINT").
export const WORKER_FLUSH_MS = 3_000

const worker = command({
  summary: 'claim and run dispatches from a coordinator',
  flags: WORKER_FLAGS,
  env: {
    PREFLIGHT_COORDINATOR: apiEnv.PREFLIGHT_COORDINATOR,
    PREFLIGHT_URL: apiEnv.PREFLIGHT_URL,
    PREFLIGHT_TOKEN: 'the worker token when --token-file is not given (removed from the environment)',
    PREFLIGHT_WORKDIR: 'the workdir when --workdir is not given',
    PREFLIGHT_IMAGE: 'the image name reported with each result',
    PATH: 'where the worker finds its git',
    ...logEnv,
  },
  example: 'PREFLIGHT_TOKEN=… preflight worker --coordinator http://127.0.0.1:8080 --agent-uid 20000',
  exits: { 0: 'stopped by SIGINT or SIGTERM, or after --max-dispatches', 1: 'a fault', 2: USAGE_EXIT },
  run: async (values) => (await import('./worker.js')).run(values),
  exitWithinMs: WORKER_FLUSH_MS,
})

const migrate = command({
  summary: 'apply database migrations (safe twice and concurrently)',
  flags: DB_FLAGS,
  env: dbEnv,
  example: 'DATABASE_URL=postgres://localhost/preflight preflight migrate',
  exits: DB_EXITS,
  run: async (values) => (await import('./migrate.js')).run(values),
})

export const TOKEN_CREATE_FLAGS = {
  role: { arg: 'ROLE', help: 'orchestrator, worker, operator or admin (required)' },
  label: { arg: 'LABEL', help: 'a note shown by token list' },
  'expires-in': { arg: 'DURATION', help: 'a number and a unit: 3600s, 30m, 12h, 90d' },
  ...DB_FLAGS,
} as const satisfies Flags
export const TOKEN_LIST_FLAGS = { format: API_FLAGS.format, ...DB_FLAGS } as const satisfies Flags

const token = {
  summary: 'API tokens in the database: create, list, revoke',
  env: dbEnv,
  example: 'preflight token create --role worker --label ci-runner',
  exits: DB_EXITS,
  commands: {
    create: command({
      summary: 'create a token and print it once (only its hash is kept)',
      flags: TOKEN_CREATE_FLAGS,
      env: dbEnv,
      example: 'preflight token create --role orchestrator --label ci --expires-in 90d',
      exits: DB_EXITS,
      run: async (values) => (await import('./token.js')).create(values),
    }),
    list: command({
      summary: 'list every token, never its secret',
      flags: TOKEN_LIST_FLAGS,
      env: dbEnv,
      example: 'preflight token list --format json',
      exits: DB_EXITS,
      run: async (values) => (await import('./token.js')).list(values),
    }),
    revoke: command({
      summary: 'revoke a token, at once on every running coordinator',
      args: ['<ID>'],
      flags: DB_FLAGS,
      env: dbEnv,
      example: 'preflight token revoke 3',
      exits: { ...DB_EXITS, 1: 'no token with that id, or the database failed' },
      run: async (values, [id]) => (await import('./token.js')).revoke(values, id as string),
    }),
  },
} satisfies Spec

export const REPORTS_FLAGS = {
  ...API_FLAGS,
  outcome: { arg: 'OUTCOME', help: 'met, unmet or error' },
  subagent: { arg: 'NAME', help: 'only reports of this subagent' },
  worker: { arg: 'ID', help: 'only reports of this worker' },
  kind: { arg: 'KIND', help: 'only reports with a result of this kind: paths, exec or git' },
  reason: { arg: 'CODE', help: 'only reports with a result for this reason' },
  since: { arg: 'TIME', help: 'only reports at or after this ISO 8601 time' },
  until: { arg: 'TIME', help: 'only reports before this ISO 8601 time' },
  limit: { arg: 'N', help: 'at most N reports' },
} as const satisfies Flags

const reports = command({
  summary: 'list preflight reports from a coordinator (every page, newest first)',
  flags: REPORTS_FLAGS,
  env: apiEnv,
  example: 'preflight reports --coordinator http://127.0.0.1:8080 --outcome unmet --limit 20',
  exits: API_EXITS,
  run: async (values) => (await import('./reports.js')).run(values),
})

export const LIST_FLAGS = {
  ...API_FLAGS,
  ...FILTER_FLAGS,
  until: { arg: 'TIME', help: 'only dispatches that ended before this ISO 8601 time' },
  limit: { arg: 'N', help: 'at most N dispatches' },
  metadata: {
    arg: 'KEY=VALUE',
    many: true,
    help: 'only dispatches whose metadata has KEY=VALUE (repeatable: all)',
  },
} as const satisfies Flags
export const WAIT_FLAGS = {
  ...API_FLAGS,
  'timeout-ms': {
    arg: 'DURATION',
    help: 'give up after this long and print the dispatch as it stands (default: wait on)',
  },
} as const satisfies Flags
export const CANCEL_FLAGS = {
  ...API_FLAGS,
  why: { arg: 'TEXT', help: "the cancel's reason, kept with the dispatch (at most 1,024 characters)" },
} as const satisfies Flags
export const WATCH_FLAGS = {
  ...API_FLAGS,
  ...FILTER_FLAGS,
  count: { arg: 'N', help: 'stop after N dispatches' },
} as const satisfies Flags

const dispatches = {
  summary: 'dispatches: why they ended, one in full, waiting for one, a cancel, and endings as they happen',
  env: apiEnv,
  example: 'preflight dispatches list --status failed --limit 20',
  exits: API_EXITS,
  commands: {
    list: command({
      summary: 'list dispatches newest first, with why each ended',
      flags: LIST_FLAGS,
      env: apiEnv,
      example: 'preflight dispatches list --status failed --since 2026-01-01T00:00:00Z',
      exits: API_EXITS,
      run: async (values) => (await import('./dispatches.js')).list(values),
    }),
    show: command({
      summary: 'one dispatch in full: events, report, setup output, completion',
      args: ['<ID>'],
      flags: API_FLAGS,
      env: apiEnv,
      example: 'preflight dispatches show 0b6c3f9e-8d1a-4c47-9a57-3f0e5f1f2a11',
      exits: API_EXITS,
      run: async (values, [id]) => (await import('./dispatches.js')).show(values, id as string),
    }),
    wait: command({
      summary: 'wait until a dispatch has ended, then print it in full',
      args: ['<ID>'],
      flags: WAIT_FLAGS,
      env: apiEnv,
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
      env: apiEnv,
      example: "preflight dispatches cancel 0b6c3f9e-8d1a-4c47-9a57-3f0e5f1f2a11 --why 'task abandoned'",
      exits: { ...API_EXITS, 1: 'not cancelled (no such dispatch, it has ended) or a fault' },
      run: async (values, [id]) => (await import('./dispatches.js')).cancel(values, id as string),
    }),
    watch: command({
      summary: 'print each dispatch as it ends (by default the failures) until stopped',
      flags: WATCH_FLAGS,
      env: apiEnv,
      example: 'preflight dispatches watch --format json --count 1',
      exits: { ...API_EXITS, 0: 'stopped by SIGINT or SIGTERM, or after --count' },
      run: async (values) => (await import('./dispatches.js')).watch(values),
    }),
  },
} satisfies Spec

const explain = command({
  summary: 'what a reason code or dispatch status means and what to look at',
  args: ['<REASON>'],
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
  reports,
  dispatches,
  explain,
}
