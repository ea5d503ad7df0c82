// Local processes for `npm start` and `npm run demo`: a coordinator on embedded PGlite and a worker.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Role } from '../src/contract/index.js'
import { ROLES } from '../src/contract/roles.js'
import { parseBootstrapTokens } from '../src/coordinator/http/bootstrap-tokens.js'

// the package's directory: this module runs as TypeScript from scripts/ (the demo, the tests) or
// compiled, from dist/scripts/ (npm start)
export const ROOT = resolve(
  fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '..' : '../..', import.meta.url)),
)
export const BIN = join(ROOT, 'bin', 'preflight.js')
// npm start's own directory: the coordinator's PGlite, start.json (for the demo) and start.lock
export const DATA_DIR = join(ROOT, '.preflight')
export const stateFile = (dataDir: string) => join(dataDir, 'start.json')
export type Tokens = Record<Role, string>

export interface StartState {
  url: string
  tokens: Tokens
  pid: number
  coordinatorPid?: number | undefined
  workerPid?: number | undefined
}

// PREFLIGHT_BOOTSTRAP_TOKENS="role:token,…" when set (missing roles are generated), else fresh random
// tokens, readable by role (pf_<role>_…) since npm start prints them.
export function bootstrapTokens(spec = process.env.PREFLIGHT_BOOTSTRAP_TOKENS): Tokens {
  const given = new Map(parseBootstrapTokens(spec ?? '').map(({ role, token }) => [role, token]))
  const tokens = {} as Tokens
  for (const role of ROLES) tokens[role] = given.get(role) ?? `pf_${role}_${randomBytes(16).toString('hex')}`
  return tokens
}

export function tokenSpec(tokens: Tokens): string {
  return ROLES.map((role) => `${role}:${tokens[role]}`).join(',')
}

// dist/ is built by `npm install` (`prepare`); built again when someone removed it. The bundle is what
// bin/preflight.js runs.
export async function ensureBuilt(): Promise<void> {
  if (existsSync(join(ROOT, 'dist', 'src', 'cli', 'bin.js'))) return
  const code = await waitExit(spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' }))
  if (code !== 0) throw new Error(`npm run build exited with code ${code}`)
}

// `detached`: its own process group, so a terminal's Ctrl-C reaches only the parent, which stops
// the children in order (worker first, so running dispatches can still report to the coordinator).
export function spawnPreflight(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; quiet?: boolean; detached?: boolean },
) {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...withoutNpm(process.env), ...opts.env },
    stdio: opts.quiet ? ['ignore', 'ignore', 'pipe'] : ['ignore', 'inherit', 'inherit'],
    detached: opts.detached ?? false,
  })
}

// What `npm run` adds to the environment: its variables and, ahead of PATH, node_modules/.bin of the
// project and its parents and npm's node-gyp-bin. A local worker must resolve `exec` requirements on the
// PATH a deployed worker has, or a requirement met in development fails in production.
export function withoutNpm(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = Object.fromEntries(Object.entries(env).filter(([name]) => !/^npm_/i.test(name)))
  if (env.PATH !== undefined)
    kept.PATH = env.PATH.split(':')
      .filter((dir) => !/\/node_modules\/\.bin\/?$|\/node-gyp-bin\/?$/.test(dir))
      .join(':')
  return kept
}

export async function waitReady(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the coordinator exited with code ${child.exitCode}`)
    if (await answers(`${url}/readyz`)) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`the coordinator did not become ready at ${url} within ${timeoutMs / 1000} s`)
}

export async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok
  } catch {
    return false
  }
}

// A child killed by a signal counts as exit code 1 (its `exit` event may already have been emitted).
export function waitExit(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? 1)
  return new Promise((r) => child.once('exit', (code, signal) => r(code ?? (signal ? 1 : 0))))
}

// Readable by its owner only, whatever an earlier run left: it holds every token.
export async function writeState(dataDir: string, state: StartState): Promise<void> {
  const file = stateFile(dataDir)
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
  await chmod(file, 0o600)
}

// Started as root, the local worker runs setup and agents as uids of their own (PREFLIGHT_AGENT_UID, default
// 61000 and up), never as root; as any other user it cannot switch, and says so when it starts.
export function isolationArgs(): string[] {
  if (process.getuid?.() !== 0) return []
  return ['--agent-uid', process.env.PREFLIGHT_AGENT_UID ?? '61000']
}

export async function readState(dataDir = DATA_DIR): Promise<StartState | undefined> {
  try {
    return JSON.parse(await readFile(stateFile(dataDir), 'utf8')) as StartState
  } catch {
    return undefined
  }
}

// A port nothing listens on right now (for the demo's private coordinator).
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer()
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => done(typeof address === 'object' && address ? address.port : 0))
    })
  })
}
