// `npm start`: a coordinator on embedded PGlite under ./.preflight plus one local worker, in one command.
import { rm } from 'node:fs/promises'
import {
  bootstrapTokens,
  ensureBuilt,
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
})
const children = [coordinator]
const stop = () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)

try {
  await waitReady(url, coordinator)
} catch (err) {
  stop()
  console.error(`npm start: ${(err as Error).message} (is port ${port} free? set PREFLIGHT_PORT)`)
  process.exit(1)
}
const worker = spawnPreflight(['worker', '--coordinator', url, '--worker-id', 'local-worker'], {
  env: { PREFLIGHT_TOKEN: tokens.worker },
})
children.push(worker)
await writeState({ url, tokens, pid: process.pid })
console.log(banner())

// Either process ending ends both: a half-running service is worse than a stopped one.
const code = await Promise.race(children.map(waitExit))
stop()
await Promise.all(children.map(waitExit))
await rm(STATE_FILE, { force: true })
process.exit(code)

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
