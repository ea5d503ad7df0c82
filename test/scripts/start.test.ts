// `npm start` (scripts/start.ts, compiled) run for real: a coordinator on PGlite and a worker, each in a
// temp data directory on a free port — one instance per directory, loopback by default, npm's PATH
// additions kept from the worker, an exit code that says a child died, nothing it started left running
// once it exits (Ctrl-C, SIGTERM, npm gone), tokens kept across restarts, and example commands that paste
// into any shell.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { connect } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, readState, type StartState, waitExit } from '../../scripts/local.js'
import { pgliteTemplate } from '../support/db.js'
import { waitFor } from '../support/wait.js'

const NPM_BIN = '/somewhere/project/node_modules/.bin'
// what `npm start` runs (package.json), without its `node`: the same script the same way
const START = (JSON.parse(readFileSync('package.json', 'utf8')).scripts.start as string).split(' ').slice(1)

interface Started {
  child: ChildProcess
  output: () => string
}

const startEnv = (port: number): NodeJS.ProcessEnv => ({
  ...process.env,
  PREFLIGHT_PORT: String(port),
  // npm start's default range (61000, as root) is test/e2e/isolation.test.ts's: a worker sweeps
  // every process of its slot uids before each claim, and killed that test's agents when both ran
  // at once (docs/operations.md: no two workers with overlapping ranges in one PID namespace)
  PREFLIGHT_AGENT_UID: '64000',
})

// `under`: the program npm start runs under, as npm runs it (a parent that may exit without a word)
function start(dataDir: string, port: number, args: string[] = [], under: string[] = []): Started {
  const child = spawn(process.execPath, [...under, ...START, '--data-dir', dataDir, ...args], {
    env: { ...startEnv(port), PATH: `${NPM_BIN}:${process.env.PATH}`, npm_lifecycle_event: 'start' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return recorded(child)
}

// `npm start` itself, as a terminal runs it: npm leads a process group of its own (the terminal's job),
// its shell and the script in it.
function npmStart(dataDir: string, port: number): Started {
  const child = spawn('npm', ['start', '--', '--data-dir', dataDir], {
    env: startEnv(port),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  return recorded(child)
}

function recorded(child: ChildProcess): Started {
  let output = ''
  child.stdout?.on('data', (b) => (output += b))
  child.stderr?.on('data', (b) => (output += b))
  return { child, output: () => output }
}

async function running(dataDir: string): Promise<StartState> {
  let state: StartState | undefined
  const written = async () => {
    state = await readState(dataDir)
    return state?.workerPid !== undefined
  }
  await waitFor(written, {
    timeoutMs: 60_000,
    everyMs: 100,
    what: 'npm start to write start.json',
  })
  return state as StartState
}

// The tokens the banner printed, by role, once it has printed all four.
async function printedTokens(started: Started): Promise<Record<string, string>> {
  const read = () =>
    Object.fromEntries(
      [...started.output().matchAll(/^ {2}(orchestrator|worker|operator|admin) +(\S+)$/gm)].map(
        ([, role, token]) => [role, token],
      ),
    )
  await waitFor(() => Object.keys(read()).length === 4, {
    timeoutMs: 60_000,
    everyMs: 100,
    what: 'npm start to print its tokens',
  })
  return read()
}

// The banner's example commands: its indented lines after "Try it".
const commandsIn = (output: string) =>
  (output.split('Try it')[1] ?? '').split('\n').filter((line) => /^ {2}\S|^ {4}/.test(line))

// What a shell reads unquoted: without its '…' and "…" parts.
const unquoted = (line: string) => line.replace(/'[^']*'/g, '').replace(/"[^"]*"/g, '')

const zombie = (pid: number) => {
  try {
    return /^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true
  }
}

// The processes of start.json still running (a zombie has ended: its parent has not looked yet).
const stillRunning = (state: StartState) =>
  [state.pid, state.coordinatorPid, state.workerPid].filter(
    (pid): pid is number => pid !== undefined && existsSync(`/proc/${pid}`) && !zombie(pid),
  )

// A data directory of its own, holding a database made already (a copy of the tests' PGlite template).
async function ownDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'preflight-start-own-'))
  await cp(await pgliteTemplate(), join(dir, 'pgdata'), { recursive: true })
  return dir
}

// After a test, failed or not: what it started stopped (the group of an `npm start`, the processes of
// start.json, `ran` read earlier or the file still there), and its directory removed.
async function discard(started: Started | undefined, dir: string, ran?: StartState): Promise<void> {
  if (started && started.child.exitCode === null && started.child.signalCode === null) {
    try {
      process.kill(-(started.child.pid as number), 'SIGKILL')
    } catch {
      started.child.kill('SIGKILL')
    }
  }
  for (const state of [ran, await readState(dir)])
    for (const pid of state ? stillRunning(state) : []) process.kill(pid, 'SIGKILL')
  await rm(dir, { recursive: true, force: true })
}

async function stop(started: Started): Promise<number> {
  if (started.child.exitCode === null) started.child.kill('SIGTERM')
  return waitExit(started.child)
}

const statusWith = async (url: string, token: string) =>
  (await fetch(`${url}/v1/dispatches`, { headers: { authorization: `Bearer ${token}` } })).status

const reachable = (host: string, port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect({ host, port }, () => {
      socket.destroy()
      done(true)
    })
    socket.on('error', () => done(false))
  })

describe('npm start', () => {
  let dir: string
  let port: number
  let first: Started
  let state: StartState
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'preflight-start-'))
    // a database made already (a copy of the tests' PGlite template): what is tested here is npm start's
    // processes; a first start on an empty directory is test/cli/coordinator.test.ts's (6–7 s of CPU)
    await cp(await pgliteTemplate(), join(dir, 'pgdata'), { recursive: true })
    port = await freePort()
    first = start(dir, port)
    state = await running(dir)
  }, 90_000)
  afterAll(async () => {
    if (first.child.exitCode === null) first.child.kill('SIGTERM')
    await waitExit(first.child)
    await rm(dir, { recursive: true, force: true })
  })

  it('listens on 127.0.0.1 unless told otherwise', async () => {
    expect(state.url).toBe(`http://127.0.0.1:${port}`)
    expect(await reachable('127.0.0.1', port)).toBe(true)
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)
    if (outside) expect(await reachable(outside.address, port)).toBe(false)
  })

  it("runs its worker on the PATH a deployed worker has, without npm's additions", async () => {
    const environ = (await readFile(`/proc/${state.workerPid}/environ`, 'utf8')).split('\0')
    const path = environ.find((v) => v.startsWith('PATH='))
    expect(path).toBeDefined()
    expect(path).not.toContain('node_modules/.bin')
    expect(environ.some((v) => v.startsWith('npm_'))).toBe(false)
  })

  it('prints commands that paste into bash and zsh: no unquoted "?" or "&", one flow', async () => {
    await printedTokens(first)
    const commands = commandsIn(first.output())
    expect(commands.length).toBeGreaterThan(4)
    expect(commands.filter((line) => /[?&]/.test(unquoted(line)))).toEqual([])
    // register → dispatch that subagent → wait for its end
    const flow = commands.join('\n')
    const at = (text: string) => flow.indexOf(text)
    expect(at('/v1/subagents')).toBeGreaterThan(-1)
    expect(at('"name":"hello"')).toBeGreaterThan(at('/v1/subagents'))
    expect(at('"subagent":"hello"')).toBeGreaterThan(at('/v1/dispatches'))
    expect(at('/v1/dispatches')).toBeGreaterThan(at('"name":"hello"'))
    expect(at('?waitFor=terminal')).toBeGreaterThan(at('"subagent":"hello"'))
  })

  it('refuses a second instance on the same directory and leaves the first untouched', async () => {
    const before = await readFile(join(dir, 'start.json'), 'utf8')
    const second = start(dir, await freePort())
    expect(await waitExit(second.child)).toBe(1)
    expect(second.output()).toMatch(/another npm start \(pid \d+\) is running/)
    expect(second.output()).not.toContain('pf_orchestrator_')
    expect(await readFile(join(dir, 'start.json'), 'utf8')).toBe(before)
    expect((await fetch(`${state.url}/readyz`)).status).toBe(200)
  }, 30_000)

  it('exits non-zero and stops the coordinator when its worker dies', async () => {
    process.kill(state.workerPid as number, 'SIGKILL')
    expect(await waitExit(first.child)).toBe(1)
    expect(first.output()).toMatch(/the worker exited \(code 1\); stopping/)
    await expect(fetch(`${state.url}/readyz`)).rejects.toThrow()
    await expect(readFile(join(dir, 'start.json'))).rejects.toThrow(/ENOENT/)
  }, 30_000)

  it('stops everything it started when the program that ran it exits without passing a signal on', async () => {
    // a parent as npm is to it: it runs npm start and, given SIGTERM, exits alone (npm does so)
    const parent = [
      '-e',
      "const c = require('node:child_process').spawn(process.execPath, process.argv.slice(1), { stdio: 'inherit' }); process.on('SIGTERM', () => process.exit(143)); c.on('exit', (code) => process.exit(code ?? 1))",
      '--',
    ]
    const other = await ownDataDir()
    let started: Started | undefined
    let ran: StartState | undefined
    try {
      started = start(other, await freePort(), [], parent)
      ran = await running(other)
      started.child.kill('SIGTERM')
      await waitExit(started.child)
      await waitFor(() => stillRunning(ran as StartState).length === 0, {
        timeoutMs: 15_000,
        what: `npm start's processes to end`,
      })
    } finally {
      await discard(started, other, ran)
    }
  }, 60_000)

  // npm start in its own process group, stopped by `stop`: how it exited, and what it had started and left
  async function stopped(stop: (child: Started, ran: StartState) => void) {
    const other = await ownDataDir()
    let started: Started | undefined
    let ran: StartState | undefined
    try {
      started = npmStart(other, await freePort())
      ran = await running(other)
      stop(started, ran)
      return { code: await waitExit(started.child), left: stillRunning(ran) }
    } finally {
      await discard(started, other, ran)
    }
  }

  it('has stopped everything it started when npm exits on Ctrl-C (SIGINT to its whole process group)', async () => {
    const { left } = await stopped((started) => process.kill(-(started.child.pid as number), 'SIGINT'))
    expect(left).toEqual([])
  }, 60_000)

  it('has stopped everything it started, and exits 0, when SIGTERM reaches the script alone', async () => {
    expect(await stopped((_, ran) => process.kill(ran.pid, 'SIGTERM'))).toEqual({ code: 0, left: [] })
  }, 60_000)

  // npm start again on this directory: its printed tokens and the checks of `use`; stopped whatever they throw
  async function restart(args: string[], use: (url: string) => Promise<void>) {
    const started = start(dir, await freePort(), args)
    try {
      const tokens = await printedTokens(started)
      await use((await running(dir)).url)
      return { tokens, code: await stop(started) }
    } finally {
      await stop(started)
    }
  }

  it('prints the same tokens when started again on the same directory, and they still work', async () => {
    const before = await printedTokens(first)
    await stop(first)
    const again = await restart([], async (url) => {
      expect(await statusWith(url, before.orchestrator as string)).toBe(200)
    })
    expect(again.code).toBe(0)
    expect(again.tokens).toEqual(before)
    expect((await stat(join(dir, 'tokens.json'))).mode & 0o777).toBe(0o600)
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
  }, 90_000)

  it('prints new tokens with --rotate-tokens, and the old ones no longer work', async () => {
    const before = JSON.parse(await readFile(join(dir, 'tokens.json'), 'utf8'))
    const rotated = await restart(['--rotate-tokens'], async (url) => {
      expect(await statusWith(url, before.orchestrator)).toBe(401)
    })
    expect(rotated.code).toBe(0)
    for (const role of ['orchestrator', 'worker', 'operator', 'admin'])
      expect(rotated.tokens[role], role).not.toBe(before[role])
    expect(JSON.parse(await readFile(join(dir, 'tokens.json'), 'utf8'))).toEqual(rotated.tokens)
  }, 90_000)
})

describe('npm start arguments', () => {
  it('refuses an unknown option with exit 2 and one line', async () => {
    const { child, output } = start('/nonexistent-preflight-dir', 1, ['--hots', 'x'])
    expect(await waitExit(child)).toBe(2)
    expect(output().trim().split('\n')).toHaveLength(1)
    expect(output()).toMatch(/^npm start: Unknown option '--hots'/)
  })
})
