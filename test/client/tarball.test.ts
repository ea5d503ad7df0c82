// The package as `npm install` of its tarball makes it in a project of its own: installed with the
// dependencies package.json declares (package.test.ts links this repository's node_modules instead,
// where the dev dependencies hide a missing one), its `preflight` command as npm links it, its
// coordinator serving from what the tarball holds (migrations/, the PGlite image in dist/assets/), and a
// consumer of preflight/client typechecked (strict, the libraries' declarations checked too) and run
// against that coordinator.
// Slow: npm resolves, fetches from its cache and unpacks 55 packages (about 80 MB on disk), 25 s on a busy two-core
// machine with a warm cache and longer with a cold one; the first start of the embedded database adds
// seconds. Hence the hook's 240 s.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packInto } from '../support/pack.js'

const run = promisify(execFile)
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const tsc = join(root, 'node_modules/typescript/bin/tsc')
const TOKEN = 'tarball-orchestrator-token-0123456789'

// Compiled to out/consumer.mjs, which run.mjs calls with the coordinator's URL and a token. It uses
// nothing of Node's (the project has no @types/node): what it needs of the platform's types (fetch's
// RequestInit and Response) comes from TypeScript's own lib.
const CONSUMER = `
import { ApiError, createClient } from 'preflight/client'
import { SubagentDefinition } from 'preflight/contract'

export async function callCoordinator(url: string, token: string) {
  const client = createClient({ url, token, retry: false })
  const ready = await client.getReadiness()
  const definition = SubagentDefinition.parse({
    name: 'installed',
    description: 'registered through the installed client',
    agent: { command: ['true'] },
  })
  const registered = await client.registerSubagent(definition)
  const read = await client.getSubagent(definition.name)
  let refused = ''
  try {
    await client.getSubagent('none')
  } catch (err) {
    if (err instanceof ApiError) refused = \`\${err.status} \${err.code}\`
  }
  return { ready, version: registered.version, read: read.definition.name, refused }
}
`
const RUN = `import { callCoordinator } from './out/consumer.mjs'
console.log(JSON.stringify(await callCoordinator(...process.argv.slice(2))))
`

// `preflight coordinator` of the installed package on embedded PGlite under `cwd`, on a free port;
// resolves with its URL once it says where it listens.
function startCoordinator(bin: string, cwd: string): Promise<{ child: ChildProcess; url: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('PREFLIGHT_') && k !== 'DATABASE_URL'),
  )
  const child = spawn(bin, ['coordinator', '--host', '127.0.0.1'], {
    cwd,
    env: { ...env, PREFLIGHT_PORT: '0', PREFLIGHT_BOOTSTRAP_TOKENS: `orchestrator:${TOKEN}` },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  return new Promise((resolveUrl, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const m = /listening on (http:\/\/[^\s"]+)/.exec(err)
      if (m?.[1]) resolveUrl({ child, url: m[1] })
    })
    child.once('exit', (code) => reject(new Error(`the installed coordinator exited with ${code}: ${err}`)))
  })
}

describe('the tarball, installed by npm', () => {
  let dir: string
  let bin: string
  // tsc's error lines for the consumer
  let errors: string[]

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist/assets')))
      throw new Error('dist/assets/ is missing: run `npm run build` first')
    dir = await mkdtemp(join(tmpdir(), 'preflight-installed-'))
    const { tarball } = await packInto(dir)
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    )
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: dir })
    bin = join(dir, 'node_modules/.bin/preflight')
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          types: [],
          rootDir: '.',
          outDir: 'out',
          // the installed declarations are checked (a type imported from a package the install lacks
          // is an error, not an any); TypeScript's own lib is not (twice the CPU, and not ours)
          skipLibCheck: false,
          skipDefaultLibCheck: true,
        },
        include: ['consumer.mts'],
      }),
    )
    await writeFile(join(dir, 'consumer.mts'), CONSUMER)
    await writeFile(join(dir, 'run.mjs'), RUN)
    // tsc emits out/consumer.mjs whatever the errors
    errors = await run(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { cwd: dir }).then(
      () => [],
      (err) => String(err.stdout).split('\n').filter(Boolean),
    )
  }, 240_000)

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('links a preflight command that prints the package version', async () => {
    const { stdout } = await run(bin, ['--version'])
    expect(stdout.trim()).toBe(JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).version)
  })

  it('typechecks a consumer of preflight/client and preflight/contract under strict settings', () => {
    expect(errors).toEqual([])
  })

  it("serves its API from the tarball's files, and the installed client calls it", async () => {
    const coordinator = await startCoordinator(bin, dir)
    try {
      const { stdout } = await run(process.execPath, [join(dir, 'run.mjs'), coordinator.url, TOKEN], {
        cwd: dir,
      })
      expect(JSON.parse(stdout)).toEqual({
        ready: { status: 'ok', database: 'pglite' },
        version: 1,
        read: 'installed',
        refused: '404 not-found',
      })
      // the API reference's script from dist/assets/ (no @scalar package is installed): read from the
      // CLI's coordinator chunk as from tsc's modules
      const script = await fetch(`${coordinator.url}/docs/scalar.js`)
      expect(script.status).toBe(200)
      expect((await script.text()).length).toBeGreaterThan(100_000)
    } finally {
      const { child } = coordinator
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r))
        child.kill('SIGTERM')
        await exited
      }
    }
  }, 120_000) // a first start makes the embedded database and migrates it
})
