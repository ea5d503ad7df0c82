// The coordinator's OpenAPI document, from an app that never connects to a database:
//   npm run openapi [-- FILE]   writes it to FILE, or to stdout
//   npm run lint:openapi        writes it to a temporary file and runs `redocly lint` (recommended rules)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/coordinator/app.js'
import { connectPostgres } from '../src/coordinator/db/client.js'
import { Waker } from '../src/coordinator/dispatch/waker.js'

// postgres.js connects on the first query, and rendering the document asks none
const db = connectPostgres('postgres://127.0.0.1:1/none')
const app = createApp({ db, config: {}, waker: new Waker(), endings: new Waker() })
const text = `${JSON.stringify(await (await app.request('/openapi.json')).json(), null, 2)}\n`
await db.close()

const [first, second] = process.argv.slice(2)
if (first === '--lint') {
  const dir = mkdtempSync(join(tmpdir(), 'preflight-openapi-'))
  const file = join(dir, second ?? 'openapi.json')
  writeFileSync(file, text)
  const lint = spawnSync('redocly', ['lint', '--extends=recommended', file], {
    stdio: 'inherit',
    // no telemetry, no update check: the lint asks nothing of the network
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  })
  rmSync(dir, { recursive: true, force: true })
  process.exit(lint.status ?? 1)
} else if (first) writeFileSync(first, text)
else process.stdout.write(text)
