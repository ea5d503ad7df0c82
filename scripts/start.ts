// `npm start`: a coordinator on embedded PGlite under ./.preflight plus one local worker, in one command.
import type { ChildProcess } from 'node:child_process'
import { rm } from 'node:fs/promises'
import {
  bootstrapTokens,
  ensureBuilt,
  isolationArgs,
  ROOT,
  STATE_FILE,
  spawnPreflight,
  tokenSpec,
  waitExit,
  waitReady,
  writeState,
} from './local.js'

const port = process.env.PREFLIGHT_PORT ?? '8080'
const url = `http://127.0.0.1:${port}`
const tokens = bootstrapTokens()

await ensureBuilt()
const coordinator = spawnPreflight(['coordinator', '--port', port], {
  env: { PREFLIGHT_BOOTSTRAP_TOKENS: tokenSpec(tokens) },
  detached: true,
})
let worker: ChildProcess | undefined
let signals = 0
// First signal: the worker stops (finishing what runs), then the coordinator. Second: agents stop at once.
const onSignal = () => {
  if (++signals > 1) return void worker?.kill('SIGTERM')
  void shutdown()
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)

try {
  await waitReady(url, coordinator)
} catch (err) {
  coordinator.kill('SIGTERM')
  console.error(`npm start: ${(err as Error).message} (is port ${port} free? set PREFLIGHT_PORT)`)
  process.exit(1)
}
// --allow-local-repos: a local setup dispatches repositories on this machine (the demo's among them).
worker = spawnPreflight(
  ['worker', '--coordinator', url, '--worker-id', 'local-worker', '--allow-local-repos', ...isolationArgs()],
  {
    env: { PREFLIGHT_TOKEN: tokens.worker },
    detached: true,
  },
)
await writeState({ url, tokens, pid: process.pid })
console.log(banner())

// Either process ending ends both: a half-running service is worse than a stopped one.
const code = await Promise.race([waitExit(coordinator), waitExit(worker)])
await shutdown()
process.exit(code)

async function shutdown(): Promise<void> {
  for (const child of [worker, coordinator]) {
    if (!child) continue
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await waitExit(child)
  }
  await rm(STATE_FILE, { force: true })
  process.exit(0)
}

function banner(): string {
  return `
preflight is running (database: PGlite in ${ROOT}/.preflight; stop with Ctrl-C)

  URL           ${url}
  orchestrator  ${tokens.orchestrator}
  worker        ${tokens.worker}
  operator      ${tokens.operator}
  admin         ${tokens.admin}

Try it (another terminal):

  npm run demo

or by hand:

  curl -s -X POST ${url}/v1/subagents \\
    -H 'Authorization: Bearer ${tokens.orchestrator}' -H 'content-type: application/json' \\
    -d '{"name":"hello","agent":{"command":["sh","-c","echo hello"]},"contextRequires":{"exec":["git","pnpm"]}}'

  curl -s ${url}/v1/reports?outcome=unmet -H 'Authorization: Bearer ${tokens.operator}'
`
}
