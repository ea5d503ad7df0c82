// The flags of every command of the `preflight` CLI as data: each one's value placeholder, help, the
// variables read when it is not given and its default (main.ts writes them into --help; args.ts
// settingOf reads the variables). Apart from the commands (commands.ts) so that a command's module
// may read its table without loading the others: `check` and `worker` run from chunks of their own.
import { defaultConfig } from '../../worker/config.js'
import { formatDuration } from './duration.js'

// A flag: with `arg`, it takes a value (`many`: may repeat, collected in order); without, it is a switch.
// Its help line is `help`, then what applies when it is not given, from `env` and `default`.
export interface Flag {
  arg?: string
  many?: true
  help: string
  // kept working but not listed (an old spelling)
  hidden?: true
  // a one-letter spelling: 'f' for -f
  short?: string
  // the variables read, in this order, when the flag is not given (args.ts settingOf; empty is unset)
  env?: readonly string[]
  // what applies when neither the flag nor a variable is given, as the help says it
  default?: string
}
export type Flags = Record<string, Flag>

// The values a command's module receives, keyed by the flag's name as typed (`timeout-ms`).
export type Values<F extends Flags> = {
  [K in keyof F]?: F[K] extends { arg: string } ? (F[K] extends { many: true } ? string[] : string) : boolean
}

const COORDINATOR_URL = {
  arg: 'URL',
  help: 'the coordinator',
  env: ['PREFLIGHT_COORDINATOR', 'PREFLIGHT_URL'],
} as const satisfies Flag
export const API_FLAGS = {
  coordinator: COORDINATOR_URL,
  token: { arg: 'T', help: 'bearer token', env: ['PREFLIGHT_TOKEN'] },
  format: { arg: 'FORMAT', help: 'text or json', default: 'text' },
} as const satisfies Flags
export const DB_FLAGS = {
  'database-url': {
    arg: 'URL',
    help: 'postgres:// URL',
    env: ['DATABASE_URL'],
    default: 'embedded PGlite in --data-dir',
  },
  'data-dir': { arg: 'DIR', help: 'where embedded PGlite keeps its data', default: './.preflight' },
} as const satisfies Flags
export const LOG_FLAGS = {
  'log-level': {
    arg: 'LEVEL',
    help: 'trace, debug, info, warn, error, fatal or silent',
    env: ['PREFLIGHT_LOG_LEVEL'],
    default: 'info',
  },
  'log-format': {
    arg: 'FORMAT',
    help: 'json or pretty',
    env: ['PREFLIGHT_LOG_FORMAT'],
    default: 'pretty on a terminal, else json',
  },
} as const satisfies Flags
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
  format: { arg: 'FORMAT', help: 'text, json or junit', default: 'text' },
  output: { arg: 'FILE', help: 'write the report to FILE (whole or not at all) instead of stdout' },
  'timeout-ms': { arg: 'DURATION', help: 'bound of each check, up to 1h', default: '10s' },
  'as-uid': {
    arg: 'UID',
    help: 'judge what this uid (gid the same, no other groups) may reach and run, as a worker judges for its --agent-uid',
    default: 'this process’s uid',
  },
} as const satisfies Flags

export const LEARN_FLAGS = {
  workspace: { arg: 'DIR', help: 'where the command runs, and whose files count', default: '.' },
  against: { arg: 'FILE', help: 'a definition (or contextRequires) JSON file to compare with' },
  from: { arg: 'ID', help: 'a dispatch whose worker observed it (--observe), instead of a command' },
  format: { arg: 'FORMAT', help: 'text or json', default: 'text' },
  coordinator: COORDINATOR_URL,
  token: { arg: 'T', help: 'bearer token (with --from)', env: ['PREFLIGHT_TOKEN'] },
} as const satisfies Flags

// The coordinator's defaults as its help shows them (src/coordinator/config.ts holds the values; loading
// it would load the server for --help: test/cli/help.test.ts holds the two the same).
export const DEFAULT_PORT = 8080
export const COORDINATOR_FLAGS = {
  port: { arg: 'N', help: 'port to listen on', env: ['PREFLIGHT_PORT', 'PORT'], default: `${DEFAULT_PORT}` },
  host: { arg: 'HOST', help: 'address to listen on', default: 'all interfaces' },
  ...DB_FLAGS,
  'lease-ms': {
    arg: 'DURATION',
    help: 'claim lease, 100ms to 1d',
    env: ['PREFLIGHT_LEASE_MS'],
    default: '1m',
  },
  'max-attempts': {
    arg: 'N',
    help: 'attempts before a dispatch expires',
    env: ['PREFLIGHT_MAX_ATTEMPTS'],
    default: '3',
  },
  'sweep-ms': { arg: 'DURATION', help: 'interval of the lease sweeper', default: '5s' },
  'claim-wait-cap-ms': { arg: 'DURATION', help: 'longest long-poll a claim may ask for', default: '30s' },
  'priority-aging-ms': {
    arg: 'DURATION',
    help: 'a dispatch queued this long is claimed before newer ones, whatever their priority',
    default: '5m',
  },
  'statement-timeout-ms': { arg: 'DURATION', help: 'bound of each SQL statement', default: '15s' },
  'request-timeout-ms': { arg: 'DURATION', help: 'bound of each HTTP request', default: '20s' },
  'max-connections': { arg: 'N', help: 'HTTP connections open at once', default: '4096' },
  'headers-timeout-ms': { arg: 'DURATION', help: 'bound of a request sending its headers', default: '10s' },
  'receive-timeout-ms': {
    arg: 'DURATION',
    help: 'bound of a request sending headers and body',
    default: '30s',
  },
  'keep-alive-timeout-ms': { arg: 'DURATION', help: 'how long an idle connection is kept', default: '65s' },
  'long-polls-per-token': { arg: 'N', help: 'long-polls one token may hold at once', default: '128' },
  'streams-per-token': { arg: 'N', help: 'event streams one token may hold at once', default: '20' },
  ...LOG_FLAGS,
} as const satisfies Flags

export const WORKER_FLAGS = {
  coordinator: COORDINATOR_URL,
  token: { arg: 'T', help: 'refused: a command line is readable by every local user' },
  'token-file': {
    arg: 'FILE',
    help: 'file holding the worker token',
    default: 'the token in PREFLIGHT_TOKEN',
  },
  'agent-uid': { arg: 'UID', help: 'run setup and agents as UID+slot (needs root or CAP_SETUID)' },
  label: { arg: 'LABEL', many: true, help: 'a label dispatches may ask for (repeatable)' },
  workdir: {
    arg: 'DIR',
    help: 'where workspaces are made',
    env: ['PREFLIGHT_WORKDIR'],
    default: 'a temp dir',
  },
  concurrency: {
    arg: 'N',
    help: 'dispatches run at once, 1 to 256',
    default: `${defaultConfig.concurrency}`,
  },
  'pass-env': { arg: 'NAME', many: true, help: 'pass this variable to setup and agents (repeatable)' },
  'workspace-root': { arg: 'DIR', many: true, help: 'a directory local workspaces may be in' },
  'keep-failed': { help: 'keep the workspace of a dispatch that failed' },
  observe: { help: 'record what setup and the agent use, with a tracer (docs/attribution.md)' },
  'allow-local-repos': { help: 'accept repositories given as local paths' },
  'worker-id': { arg: 'ID', help: 'this worker’s name', default: 'host-pid' },
  'grace-ms': {
    arg: 'DURATION',
    help: 'how long a stop waits for running dispatches',
    default: formatDuration(defaultConfig.graceMs),
  },
  'wait-ms': {
    arg: 'DURATION',
    help: 'long-poll wait of a claim, up to 10m',
    default: formatDuration(defaultConfig.waitMs),
  },
  'setup-timeout-ms': {
    arg: 'DURATION',
    help: 'bound of a setup script',
    default: formatDuration(defaultConfig.setupTimeoutMs),
  },
  'check-timeout-ms': {
    arg: 'DURATION',
    help: 'bound of each check',
    default: formatDuration(defaultConfig.checkTimeoutMs),
  },
  'clone-timeout-ms': {
    arg: 'DURATION',
    help: 'bound of a clone',
    default: formatDuration(defaultConfig.cloneTimeoutMs),
  },
  'agent-timeout-ms': {
    arg: 'DURATION',
    help: 'bound of an agent, up to 1d',
    default: 'none: its lease is renewed while it runs',
  },
  'max-dispatches': { arg: 'N', help: 'stop after this many dispatches' },
  'exit-when-idle': {
    arg: 'DURATION',
    help: 'exit 0 once no dispatch has run for this long, 1s to 1d (one pod per dispatch; --concurrency 1)',
    default: 'wait on',
  },
  'repo-allow': { arg: 'PATTERN', many: true, help: 'repositories that may be cloned (repeatable)' },
  'git-credentials': { arg: 'FILE', help: 'git credential store for clones' },
  'ssh-key': { arg: 'FILE', help: 'SSH key for clones (with --ssh-known-hosts)' },
  'ssh-known-hosts': { arg: 'FILE', help: 'known_hosts for SSH clones (with --ssh-key)' },
  'metrics-port': { arg: 'N', help: 'serve Prometheus metrics and the health probes on this port' },
  'metrics-host': { arg: 'HOST', help: 'address of the metrics server', default: '127.0.0.1' },
  ...LOG_FLAGS,
} as const satisfies Flags

// `token` opens the database, or with --coordinator asks that coordinator's admin routes: the way to a
// database a running coordinator holds (npm start's embedded one)
export const TOKEN_FLAGS = {
  ...DB_FLAGS,
  coordinator: {
    arg: 'URL',
    help: "through this coordinator's API (an admin token) instead of the database",
  },
  token: { arg: 'T', help: 'an admin bearer token, with --coordinator', env: ['PREFLIGHT_TOKEN'] },
} as const satisfies Flags
export const TOKEN_CREATE_FLAGS = {
  role: { arg: 'ROLE', help: 'orchestrator, worker, operator or admin (required)' },
  label: { arg: 'LABEL', help: 'a note shown by token list' },
  'expires-in': { arg: 'DURATION', help: 'a number and a unit: 3600s, 30m, 12h, 90d' },
  ...TOKEN_FLAGS,
} as const satisfies Flags
export const TOKEN_LIST_FLAGS = { format: API_FLAGS.format, ...TOKEN_FLAGS } as const satisfies Flags
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
    help: 'give up after this long and print the dispatch as it stands',
    default: 'wait on',
  },
} as const satisfies Flags
export const CANCEL_FLAGS = {
  ...API_FLAGS,
  why: { arg: 'TEXT', help: "the cancel's reason, kept with the dispatch (at most 1,024 characters)" },
} as const satisfies Flags
export const RETRY_FLAGS = {
  ...API_FLAGS,
  'idempotency-key': {
    arg: 'KEY',
    help: 'the same key again answers the same new dispatch instead of queueing another',
  },
} as const satisfies Flags
export const WATCH_FLAGS = {
  ...API_FLAGS,
  ...FILTER_FLAGS,
  count: { arg: 'N', help: 'stop after N dispatches' },
} as const satisfies Flags
export const CREATE_FLAGS = {
  ...API_FLAGS,
  subagent: { arg: 'NAME', help: 'the registered subagent to run (required)' },
  repo: { arg: 'URL', help: 'the repository the worker clones (give it or --path)' },
  ref: { arg: 'REF', help: 'the branch, tag or commit to check out', default: 'the remote’s HEAD' },
  setup: {
    arg: 'WORD',
    many: true,
    help: 'one word of the setup command run before the checks, in order: --setup npm --setup ci',
    default: 'sh preflight-setup.sh when the workspace has one',
  },
  path: {
    arg: 'DIR',
    help: 'an absolute directory on the worker, inside one of its --workspace-root (used before --repo)',
  },
  'idempotency-key': { arg: 'KEY', help: 'the same key again answers the same dispatch, not a new one' },
  priority: { arg: 'N', help: 'claims take the highest first, -100 to 100', default: '0' },
  label: { arg: 'LABEL', many: true, help: 'a label the worker must offer to claim it (repeatable: all)' },
  metadata: { arg: 'KEY=VALUE', many: true, help: 'your own reference, kept with it (repeatable)' },
  deadline: {
    arg: 'TIME',
    help: 'it ends by then: an ISO 8601 time, or a duration from now (30m, 2h) up to 7d',
    default: 'none',
  },
  wait: { help: 'then wait until it has ended and print it in full, as dispatches wait does' },
} as const satisfies Flags

export const APPLY_FLAGS = {
  ...API_FLAGS,
  file: { arg: 'FILE', short: 'f', help: 'the definition, JSON or YAML; - reads it from stdin (required)' },
} as const satisfies Flags
