// A real Node process started with descriptors of its parent's: what closeInheritedFds (the built module,
// dist/, made by the global setup) closes, what it leaves to Node, and what a program it then starts
// is given.
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const MODULE = pathToFileURL(resolve(import.meta.dirname, '..', '..', 'dist', 'worker', 'inherited-fds.js'))

// Closes, waits a turn of the event loop (an IPC channel is disconnected on the next tick), then lists
// the descriptors of a program it starts, as the worker starts setup and agents.
const CHILD = `
const { closeInheritedFds } = await import(process.argv[1])
const result = closeInheritedFds()
await new Promise((r) => setImmediate(r))
const { execFileSync } = await import('node:child_process')
const listing = execFileSync('sh', ['-c', 'ls /proc/$$/fd'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
const seen = listing.trim().split('\\n').map(Number).sort((a, b) => a - b)
process.stdout.write(JSON.stringify({ result, seen, connected: process.connected ?? null }) + '\\n')
`

const running = new Set<ChildProcess>()
afterEach(() => {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
})

// stdio of 21 entries: 0-2, nothing at 3-19 (the gap that stops Node's own marking at 16), `at20` at 20
function stdioWith(at3: 'ignore' | 'pipe' | 'ipc', at20: 'ignore' | 'pipe' | 'ipc'): StdioOptions {
  return ['ignore', 'pipe', 'inherit', at3, ...Array(16).fill('ignore'), at20]
}

async function started(stdio: StdioOptions) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, MODULE.href], {
    env: { PATH: process.env.PATH ?? '' },
    stdio,
  })
  running.add(child)
  let disconnected = false
  child.once('disconnect', () => {
    disconnected = true
  })
  const line = await new Promise<string>((done, fail) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('\n')) done(out.split('\n')[0] ?? '')
    })
    child.once('exit', (code) => fail(new Error(`exited ${code} before answering: ${out}`)))
  })
  const answer = JSON.parse(line) as {
    result: { closed: number[]; disconnected?: number; why?: string }
    seen: number[]
    connected: boolean | null
  }
  return { ...answer, parentSawDisconnect: () => disconnected }
}

describe('closeInheritedFds', () => {
  it('closes a descriptor inherited without close-on-exec, so a program it starts gets only 0, 1 and 2', async () => {
    const { result, seen } = await started(stdioWith('ignore', 'pipe'))
    // and whatever this test process inherited itself and passed on
    expect(result.closed).toContain(20)
    expect(seen).toEqual([0, 1, 2])
  })

  it('leaves one Node marked close-on-exec at start (fd 3) to Node: no program is given it either', async () => {
    const { result, seen } = await started(stdioWith('pipe', 'ignore'))
    expect(result.closed).not.toContain(3)
    expect(seen).toEqual([0, 1, 2])
  })

  it('disconnects an IPC channel that lacks close-on-exec instead of closing it under Node', async () => {
    const { result, seen, connected, parentSawDisconnect } = await started(stdioWith('ignore', 'ipc'))
    expect(result).toMatchObject({ disconnected: 20 })
    expect(result.closed).not.toContain(20)
    expect(connected).toBe(false)
    expect(seen).toEqual([0, 1, 2])
    expect(parentSawDisconnect()).toBe(true)
  })

  it('keeps an IPC channel that has close-on-exec (fork puts it at 3) connected', async () => {
    const { result, seen, connected } = await started(stdioWith('ipc', 'ignore'))
    expect(result.disconnected).toBeUndefined()
    expect(result.closed).not.toContain(3)
    expect(connected).toBe(true)
    expect(seen).toEqual([0, 1, 2])
  })
})
