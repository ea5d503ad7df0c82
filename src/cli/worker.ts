// `preflight worker` — claims dispatches from a coordinator and runs their lifecycle.
import { spawnSync } from 'node:child_process'
import { readFileSync, realpathSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createApi } from '../../worker/api.js'
import { type CloneCredentials, secretFileProblem, secretFiles } from '../../worker/clone-credentials.js'
import { defaultConfig, workerConfig } from '../../worker/config.js'
import { createHealth } from '../../worker/health.js'
import {
  missingCapabilities,
  movableBy,
  readableBy,
  slotIdentities,
  writableBy,
} from '../../worker/identity.js'
import { stopWhenIdle } from '../../worker/idle.js'
import { closeInheritedFds, type InheritedFds } from '../../worker/inherited-fds.js'
import { FIND } from '../../worker/leftovers.js'
import { createWorkerLog } from '../../worker/log.js'
import { createWorkerMetrics, serveMetrics } from '../../worker/metrics.js'
import { findTracer, tracerPrograms } from '../../worker/observe/trace.js'
import { repoPatternProblem } from '../../worker/repo-allow.js'
import { findGit, type Git } from '../../worker/run/git-env.js'
import { gnuRm } from '../../worker/run/remove.js'
import { startWorker } from '../../worker/worker.js'
import { ENV_NAME, Label } from '../contract/index.js'
import type { Log } from '../log/log.js'
import { coordinatorUrl, durationFlag, intFlag, settingOf } from './args.js'
import { UsageError } from './errors.js'
import { type Values, WORKER_FLAGS } from './flags.js'
import { logOptions } from './log-options.js'
import { refuseServiceLink } from './service-links.js'
import { workerToken } from './worker-token.js'

export async function run(values: Values<typeof WORKER_FLAGS>): Promise<number> {
  // before anything is started: not even the --agent-uid probe or git is given what the worker inherited
  const inherited = closeInheritedFds()
  const env = process.env
  refuseServiceLink(settingOf(WORKER_FLAGS, 'coordinator', values), 'an http(s) URL')
  const url = coordinatorUrl(values.coordinator).toString()
  const { token, environ } = await workerToken(values.token, values['token-file'])
  const logging = logOptions(values)
  for (const name of values['pass-env'] ?? []) {
    if (!ENV_NAME.test(name)) throw new UsageError(`--pass-env takes a variable name, got "${name}"`)
  }
  const labels = values.label ?? []
  for (const label of labels) {
    const problem = Label.safeParse(label).error?.issues[0]?.message
    if (problem) throw new UsageError(`--label "${label}": ${problem}`)
  }
  // before the workdir is made: a refused flag touches nothing
  const cloneRules = {
    repoAllow: repoPatterns(values['repo-allow'] ?? []),
    ...(await cloneCredentials(values)),
  }
  const concurrency = intFlag(values.concurrency, 'concurrency', 1, 256) ?? defaultConfig.concurrency
  const agentUid = intFlag(values['agent-uid'], 'agent-uid', 1, 2 ** 31 - 1 - concurrency)
  const metricsPort = intFlag(values['metrics-port'], 'metrics-port', 0, 65_535)
  const idleMs = durationFlag(values['exit-when-idle'], 'exit-when-idle', 1_000, DAY_MS)
  // with one slot a claim is asked only while no dispatch runs; with more, stopping on one slot's empty
  // claim would cut another slot's claim short
  if (idleMs !== undefined && concurrency !== 1)
    throw new UsageError('--exit-when-idle takes --concurrency 1: one dispatch per pod')
  if (metricsPort === undefined && values['metrics-host'] !== undefined)
    throw new UsageError('--metrics-host needs --metrics-port')
  const workdirFlag = settingOf(WORKER_FLAGS, 'workdir', values)?.value
  // Outside any repository by default: a workspace without its own .git must not find an enclosing one.
  const workdir = workdirFlag ? resolve(workdirFlag) : await mkdtemp(join(tmpdir(), 'preflight-work-'))
  try {
    await mkdir(workdir, { recursive: true })
    const roots = (values['workspace-root'] ?? []).map((r) => resolve(r))
    const git = trustedGit(env.PATH, [workdir, ...roots])
    // --observe: preflight-trace or strace, the first that may trace here, else the output is read
    // (docs/attribution.md)
    const observe = values.observe ? findTracer() : undefined
    const tracer = typeof observe === 'object' ? tracerPrograms(observe) : []
    if (agentUid !== undefined) {
      const secrets = [...(values['token-file'] ? [values['token-file']] : []), ...secretFiles(cloneRules)]
      const knownHosts = cloneRules.cloneCredentials?.ssh?.knownHosts
      const trusted = [git.bin, agentTreeRemover(), FIND, ...tracer, ...(knownHosts ? [knownHosts] : [])]
      await confineTo(agentUid, concurrency, { workdir, trusted, secrets })
    }
    const options = workerConfig({
      git,
      workerId: values['worker-id'] ?? `${hostname()}-${process.pid}`,
      workdir,
      roots,
      passEnv: values['pass-env'] ?? [],
      keepFailed: values['keep-failed'] ?? false,
      allowLocalRepos: values['allow-local-repos'] ?? false,
      ...cloneRules,
      concurrency,
      ...(agentUid !== undefined ? { agentUid } : {}),
      ...(labels.length > 0 ? { labels } : {}),
      graceMs: durationFlag(values['grace-ms'], 'grace-ms', 0, DAY_MS) ?? defaultConfig.graceMs,
      waitMs: durationFlag(values['wait-ms'], 'wait-ms', 0, 600_000) ?? defaultConfig.waitMs,
      ...optional('setupTimeoutMs', durationFlag(values['setup-timeout-ms'], 'setup-timeout-ms', 1, DAY_MS)),
      ...optional('checkTimeoutMs', durationFlag(values['check-timeout-ms'], 'check-timeout-ms', 1, DAY_MS)),
      ...optional('cloneTimeoutMs', durationFlag(values['clone-timeout-ms'], 'clone-timeout-ms', 1, DAY_MS)),
      ...optional('agentTimeoutMs', durationFlag(values['agent-timeout-ms'], 'agent-timeout-ms', 1, DAY_MS)),
      ...optional('maxDispatches', intFlag(values['max-dispatches'], 'max-dispatches', 1, 86_400_000)),
      ...(env.PREFLIGHT_IMAGE ? { image: env.PREFLIGHT_IMAGE } : {}),
      ...(observe === undefined ? {} : { observe }),
    })
    const log = createWorkerLog({ ...logging, secrets: [token] })
    const health = createHealth()
    let stop = () => {}
    const draining = () => {
      health.draining()
      stop()
    }
    const claims = createApi({
      url,
      token,
      onRetry: (what, failures, err, about) =>
        log.warn('a write to the coordinator failed, retrying', {
          call: what,
          failures,
          why: (err as Error).message,
          ...about,
        }),
    })
    const idle =
      idleMs === undefined
        ? claims
        : stopWhenIdle(claims, idleMs, () => {
            log.info('no dispatch for the --exit-when-idle time: stopping', { idleMs })
            draining()
          })
    const api = health.watch(idle)
    log.info(`worker ${options.workerId} started`, {
      workerId: options.workerId,
      coordinator: url,
      workdir,
      concurrency: options.concurrency,
      ...(agentUid === undefined ? {} : { agentUids: `${agentUid}–${agentUid + concurrency - 1}` }),
      ...(observe === undefined
        ? {}
        : { observe: typeof observe === 'object' ? observe.program : `the output: ${observe}` }),
    })
    logInherited(log, inherited)
    if (!environ.scrubbed) {
      log.warn(
        `the worker token remains in /proc/${process.pid}/environ, where root and this worker's uid can read ` +
          'it while the worker runs: give it with --token-file FILE instead',
        { why: environ.why },
      )
    }
    if (agentUid === undefined) {
      log.warn(
        "setup and agents run as this worker's own uid: they can read its token and outlive their dispatch; " +
          'use --agent-uid, or one dispatch per container (--max-dispatches 1); see docs/operations.md',
      )
    } else if (concurrency > 1 && !noNewPrivileges()) {
      log.warn(
        'setup and agents may gain another uid through a setuid file: one slot can leave such a file in a ' +
          "directory another slot's agent opened, for as long as that dispatch runs; start the worker with " +
          'no new privileges (compose: security_opt no-new-privileges); see docs/operations.md',
      )
    }
    const metrics = createWorkerMetrics({ concurrency: options.concurrency })
    // for a scraper beside the worker, not the network, unless --metrics-host says otherwise
    const metricsHost = values['metrics-host'] ?? '127.0.0.1'
    const served =
      metricsPort === undefined ? undefined : await serveMetrics(metrics, metricsPort, metricsHost, health)
    if (served)
      log.info(`metrics on http://${metricsHost}:${served.port}/metrics`, { metricsPort: served.port })
    const worker = startWorker(options, { api, log, env, ...(served ? { metrics } : {}) })
    stop = () => void worker.stop()
    onSignals(draining, () => worker.abort())
    await worker.done
    await served?.close()
    log.info(`worker ${options.workerId} stopped`, { workerId: options.workerId, counts: worker.counts })
    if (worker.fatal) throw new Error(`the coordinator refused the worker: ${worker.fatal.message}`)
    return 0
  } finally {
    // the temp workdir this worker made goes, also when a flag checked after it was made is refused
    if (!workdirFlag) await rm(workdir, { recursive: true, force: true })
  }
}

// What start-up did with the descriptors it inherited (closeInheritedFds), once there is a log to say it.
function logInherited(log: Log, { closed, disconnected, why }: InheritedFds): void {
  if (why) log.warn('cannot list inherited descriptors: setup and agents may be given them', { why })
  if (closed.length > 0) log.info('closed descriptors inherited without close-on-exec', { fds: closed })
  if (disconnected !== undefined)
    log.info('disconnected an IPC channel without close-on-exec (the worker speaks no IPC)', {
      fd: disconnected,
    })
}

// First SIGTERM/SIGINT: graceful stop; a second one stops running agents at once.
function onSignals(stop: () => void, abort: () => void) {
  let received = 0
  const handle = () => (++received === 1 ? stop() : abort())
  process.on('SIGTERM', handle)
  process.on('SIGINT', handle)
}

// --agent-uid: the worker must be able to switch to the slot uids and act on their files, the range must
// not hold its own uid, the workdir's top is the worker's, traversable (0711) but not listable by them,
// no slot uid may replace what the worker trusts (its git, its secrets, known_hosts) or read a secret.
async function confineTo(
  base: number,
  concurrency: number,
  { workdir, trusted, secrets }: { workdir: string; trusted: string[]; secrets: string[] },
): Promise<void> {
  const own = process.getuid?.() ?? -1
  if (own >= base && own < base + concurrency) {
    throw new UsageError(
      `--agent-uid ${base} with --concurrency ${concurrency} includes this worker's own uid ${own}`,
    )
  }
  const missing = missingCapabilities()
  if (missing.length > 0) {
    throw new UsageError(
      `--agent-uid needs root or the capabilities ${missing.join(', ')}, which this worker lacks`,
    )
  }
  const slots = slotIdentities(base, concurrency)
  // a gid that names a group (shadow, docker) would give the agents that group's access
  const knownIds = new Set([...idsIn('/etc/passwd'), ...idsIn('/etc/group')])
  for (const file of [...trusted, ...secrets]) {
    const open = writableBy(file, slots)
    if (open) throw new UsageError(`${file} is not safe from agents: uid ${base}+ may write ${open}`)
  }
  for (const file of secrets) {
    if (readableBy(file, slots)) throw new UsageError(`${file} is readable by the agents' uids: make it 0600`)
  }
  const taken = slots.find((id) => knownIds.has(id.uid))
  if (taken) {
    throw new UsageError(
      `--agent-uid: uid/gid ${taken.uid} already names a user or group here: choose an unused range`,
    )
  }
  // it becomes the worker's and 0711: a shared directory (/tmp) would be broken for everyone else
  if (((await stat(workdir)).mode & 0o1002) !== 0) {
    throw new UsageError(
      `--agent-uid: --workdir ${workdir} is shared with other users: give the worker a directory of its own`,
    )
  }
  // every mkdir, clone, chown and removal of the worker's goes under it: no slot uid may move it (or a
  // directory above it) away and put a link in its place
  const movable = movableBy(realpathSync(workdir), slots) ?? movableBy(resolve(workdir), slots)
  if (movable) {
    throw new UsageError(
      `--agent-uid: --workdir ${workdir} is not safe from agents: uid ${base}+ may replace ${movable}`,
    )
  }
  await chown(workdir, own, process.getgid?.() ?? 0)
  await chmod(workdir, 0o711)
  const probe = spawnSync('/bin/sh', ['-c', 'exit 0'], { uid: base, gid: base, cwd: workdir, env: {} })
  if (probe.status !== 0) {
    const why = probe.error ? (probe.error as NodeJS.ErrnoException).code : `exit ${probe.status}`
    throw new UsageError(`--agent-uid: cannot start a program as uid ${base} in ${workdir} (${why})`)
  }
}

// Whether this process (and so all it starts) runs with no_new_privs: setuid and file capabilities are
// then ignored by exec.
function noNewPrivileges(): boolean {
  try {
    return /^NoNewPrivs:\s*1$/m.test(readFileSync('/proc/self/status', 'utf8'))
  } catch {
    return false
  }
}

// The numeric ids (third field) of a passwd or group file; none when it cannot be read.
function idsIn(file: string): number[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => Number(line.split(':')[2]))
      .filter(Number.isInteger)
  } catch {
    return []
  }
}

// --agent-uid: the agents' trees are removed with GNU rm, whose walk follows no link (worker/run/remove.ts)
function agentTreeRemover(): string {
  try {
    return gnuRm()
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

// git, found once on the worker's own PATH and never inside a workspace; the worker does not start without it.
function trustedGit(path: string | undefined, avoid: string[]): Git {
  try {
    return findGit(path, avoid)
  } catch (err) {
    throw new UsageError(`${(err as Error).message}: the worker clones and checks with git`)
  }
}

// --repo-allow PATTERN...: each one a pattern of worker/repo-allow.ts, or the worker does not start.
function repoPatterns(patterns: string[]): string[] {
  for (const pattern of patterns) {
    const problem = repoPatternProblem(pattern)
    if (problem) throw new UsageError(`--repo-allow ${JSON.stringify(pattern)} ${problem}`)
  }
  return patterns
}

// --git-credentials FILE, --ssh-key FILE with --ssh-known-hosts FILE: readable regular files, checked
// before the first claim. Their absolute paths are kept, not their real paths: a mounted secret that
// is replaced by swapping a link stays current.
async function cloneCredentials(values: {
  'git-credentials'?: string | undefined
  'ssh-key'?: string | undefined
  'ssh-known-hosts'?: string | undefined
}): Promise<{ cloneCredentials?: CloneCredentials }> {
  const { 'git-credentials': store, 'ssh-key': key, 'ssh-known-hosts': knownHosts } = values
  if ((key === undefined) !== (knownHosts === undefined))
    throw new UsageError('--ssh-key and --ssh-known-hosts go together: give both or neither')
  const file = async (flag: string, value: string) => {
    const path = resolve(value)
    const problem = await secretFileProblem(path)
    if (problem) throw new UsageError(`--${flag} ${problem}`)
    return path
  }
  const credentials: CloneCredentials = {
    ...(store !== undefined ? { gitCredentials: await file('git-credentials', store) } : {}),
    ...(key !== undefined && knownHosts !== undefined
      ? { ssh: { key: await file('ssh-key', key), knownHosts: await file('ssh-known-hosts', knownHosts) } }
      : {}),
  }
  return Object.keys(credentials).length > 0 ? { cloneCredentials: credentials } : {}
}

const DAY_MS = 24 * 3_600_000

function optional<K extends string>(key: K, n: number | undefined) {
  return n === undefined ? {} : ({ [key]: n } as Record<K, number>)
}
