// `npm start [-- --host H] [-- --data-dir DIR] [-- --rotate-tokens]`: a coordinator on embedded PGlite under
// ./.preflight plus one local worker, in one command; run compiled, from dist/scripts/ (start.mjs). One per
// data directory: a second is refused before it touches anything. Its tokens are kept there across
// restarts (start-tokens.ts).
import type { ChildProcess } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { takePidLock } from '../src/cli/pid-lock.js'
import {
  DATA_DIR,
  isolationArgs,
  ROOT,
  readState,
  spawnPreflight,
  stateFile,
  type Tokens,
  tokenSpec,
  waitExit,
  waitReady,
  writeState,
} from './local.js'
import { startTokens, tokensFile } from './start-tokens.js'

const options = parseOptions()
const dataDir = resolve(options['data-dir'] ?? DATA_DIR)
const lock = takePidLock(join(dataDir, 'start.lock'))
if (typeof lock !== 'function') {
  const running = await readState(dataDir)
  fail(
    `another npm start (pid ${lock.heldBy}) is running on ${dataDir}${running ? ` at ${running.url}` : ''}; ` +
      'stop it first (its tokens are in start.json there), or give this one --data-dir',
  )
}
const port = process.env.PREFLIGHT_PORT ?? '8080'
const host = options.host ?? '127.0.0.1'
// a wildcard address is reached through loopback on this machine
const local = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
const url = `http://${local.includes(':') ? `[${local}]` : local}:${port}`
const tokens = await keptTokens()

const coordinator = spawnPreflight(['coordinator', '--port', port, '--host', host, '--data-dir', dataDir], {
  env: { PREFLIGHT_BOOTSTRAP_TOKENS: tokenSpec(tokens) },
  detached: true,
})
let worker: ChildProcess | undefined
let signals = 0
// First signal: the worker stops (finishing what runs), then the coordinator. Second: agents stop at once.
const onSignal = () => {
  if (++signals > 1) return void worker?.kill('SIGTERM')
  void shutdown(0)
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)
// npm passes on neither a SIGTERM it gets (it exits alone) nor a SIGINT sent to it alone (a terminal's
// Ctrl-C reaches the whole group, this process too). When npm is gone this process has another parent:
// it stops then as on a signal, and leaves nothing it started running.
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent && signals === 0) onSignal()
}, 250).unref()

try {
  await waitReady(url, coordinator)
} catch (err) {
  coordinator.kill('SIGTERM')
  lock()
  fail(`${(err as Error).message} (is port ${port} free? set PREFLIGHT_PORT)`)
}
// --allow-local-repos: a local setup dispatches repositories on this machine (the demo's among them).
worker = spawnPreflight(
  ['worker', '--coordinator', url, '--worker-id', 'local-worker', '--allow-local-repos', ...isolationArgs()],
  { env: { PREFLIGHT_TOKEN: tokens.worker }, detached: true },
)
await writeState(dataDir, {
  url,
  tokens,
  pid: process.pid,
  coordinatorPid: coordinator.pid,
  workerPid: worker.pid,
})
console.log(banner())

// Either process ending ends both, and npm start with an error: a half-running service is worse than a
// stopped one, and a script or a terminal must see that it stopped.
const [which, code] = await Promise.race([
  waitExit(coordinator).then((c) => ['coordinator', c] as const),
  waitExit(worker).then((c) => ['worker', c] as const),
])
if (signals === 0) {
  console.error(`npm start: the ${which} exited (code ${code}); stopping`)
  await shutdown(code || 1)
}

async function shutdown(code: number): Promise<never> {
  for (const child of [worker, coordinator]) {
    if (!child) continue
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await waitExit(child)
  }
  await rm(stateFile(dataDir), { force: true })
  if (typeof lock === 'function') lock()
  process.exit(code)
}

function parseOptions() {
  try {
    return parseArgs({
      options: {
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        'rotate-tokens': { type: 'boolean' },
      },
    }).values
  } catch (err) {
    return fail(
      `${(err as Error).message} (npm start [-- --host ADDRESS] [-- --data-dir DIR] [-- --rotate-tokens])`,
      2,
    )
  }
}

async function keptTokens(): Promise<Tokens> {
  try {
    return await startTokens(dataDir, {
      rotate: options['rotate-tokens'] ?? false,
      pinned: process.env.PREFLIGHT_BOOTSTRAP_TOKENS,
    })
  } catch (err) {
    if (typeof lock === 'function') lock()
    return fail((err as Error).message)
  }
}

function fail(message: string, code = 1): never {
  console.error(`npm start: ${message}`)
  process.exit(code)
}

// Each argument quoted, so that the commands paste into bash and zsh alike (an unquoted "?" is a glob in
// zsh, "&" sends a command to the background in both): single quotes, or double quotes around a URL with
// "$ID" in it (a URL holds no "$", "`", '"' or "\").
function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`
}

function banner(): string {
  const reach =
    host === local
      ? ''
      : `\n  (listening on every interface: ${host}; give --host 127.0.0.1 to keep it local)`
  const auth = quote(`Authorization: Bearer ${tokens.orchestrator}`)
  const json = quote('content-type: application/json')
  const subagent = {
    name: 'hello',
    agent: { command: ['sh', '-c', 'echo hello'] },
    contextRequires: { exec: ['git', 'pnpm'] },
  }
  const dispatch = { subagent: 'hello', workspace: { repo: ROOT } }
  return `
preflight is running (database: PGlite in ${dataDir}; stop with Ctrl-C)

  URL           ${url}  (in a browser: the operator page; sign in with the operator token)${reach}
  orchestrator  ${tokens.orchestrator}
  worker        ${tokens.worker}
  operator      ${tokens.operator}
  admin         ${tokens.admin}
  (kept in ${tokensFile(dataDir)}; npm start -- --rotate-tokens mints new ones)

Try it (another terminal):

  npm run demo

or by hand: register a subagent, dispatch it on this repository, wait for its end and its report:

  curl -s -X POST ${quote(`${url}/v1/subagents`)} -H ${json} \\
    -H ${auth} \\
    -d ${quote(JSON.stringify(subagent))}
  ID=$(curl -s -X POST ${quote(`${url}/v1/dispatches`)} -H ${json} \\
    -H ${auth} \\
    -d ${quote(JSON.stringify(dispatch))} | sed 's/.*"id":"\\([^"]*\\)".*/\\1/')
  curl -s "${url}/v1/dispatches/$ID?waitFor=terminal&timeoutMs=30000" \\
    -H ${auth}
`
}
