// A real process scrubs its own /proc/<pid>/environ: the built module (dist/, made by the global setup),
// run by a Node process started with the secret, and the kernel's copy read from outside it.
import { type ChildProcess, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const MODULE = pathToFileURL(resolve(import.meta.dirname, '..', '..', 'dist', 'worker', 'scrub-environ.js'))
const SECRET = 'scrub-me-0123456789abcdef'
const isRoot = process.getuid?.() === 0
// A uid with no files of its own here: the scrub needs no privilege.
const NOBODY = 65_534

// Scrubs SECRET_T, prints its result and what its process.env still says, then stays until stdin ends.
const CHILD = `
const { scrubFromEnviron } = await import(process.argv[1])
const result = scrubFromEnviron('SECRET_T', process.env.SECRET_T ?? '')
console.log(JSON.stringify({ result, other: process.env.OTHER ?? null }))
process.stdin.resume()
process.stdin.on('end', () => process.exit(0))
`

const running = new Set<ChildProcess>()
afterEach(() => {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
})

// `wrapper`: a program the child runs under (unshare, to take /proc away).
async function scrubbed(env: Record<string, string>, opts: { uid?: number; wrapper?: string[] } = {}) {
  const argv = [...(opts.wrapper ?? []), process.execPath, '--input-type=module', '-e', CHILD, MODULE.href]
  const [file = '', ...args] = argv
  const child = spawn(file, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
    ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.uid }),
  })
  running.add(child)
  const line = await new Promise<string>((done, fail) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('\n')) done(out.split('\n')[0] ?? '')
    })
    child.once('exit', (code) => fail(new Error(`exited ${code} before answering: ${out}`)))
  })
  const answer = JSON.parse(line) as { result: { scrubbed: boolean; why?: string }; other: string | null }
  // the kernel's copy, read by another process while the scrubbed one still runs
  const environ = (await readFile(`/proc/${child.pid}/environ`, 'utf8')).split('\0')
  return { ...answer, environ }
}

describe('scrubFromEnviron', () => {
  it('empties the value in /proc/<pid>/environ and leaves every other variable as it was', async () => {
    const { result, other, environ } = await scrubbed({ SECRET_T: SECRET, OTHER: 'kept' })
    expect(result).toEqual({ scrubbed: true })
    expect(environ.join('\n')).not.toContain(SECRET)
    expect(environ).toContain('SECRET_T=')
    expect(environ).toContain('OTHER=kept')
    expect(environ).toContain(`PATH=${process.env.PATH}`)
    expect(other).toBe('kept')
  })

  it.runIf(isRoot)('works in a process of an ordinary uid', async () => {
    const { result, environ } = await scrubbed({ SECRET_T: SECRET, OTHER: 'kept' }, { uid: NOBODY })
    expect(result).toEqual({ scrubbed: true })
    expect(environ.join('\n')).not.toContain(SECRET)
    expect(environ).toContain('OTHER=kept')
  })

  it('says the value is still shown when another variable holds it too, and leaves that one alone', async () => {
    const { result, other, environ } = await scrubbed({ SECRET_T: SECRET, OTHER: SECRET })
    expect(result).toEqual({ scrubbed: false, why: expect.stringContaining('OTHER') })
    expect(environ).toContain(`OTHER=${SECRET}`)
    expect(other).toBe(SECRET)
  })

  // Without /proc (a mount namespace with an empty tmpfs over it) there is nothing to write through.
  it.runIf(isRoot)('says why, and throws nothing, when there is no /proc', async () => {
    const hideProc = ['unshare', '-m', 'sh', '-c', 'mount -t tmpfs none /proc && exec "$0" "$@"']
    const { result, environ } = await scrubbed({ SECRET_T: SECRET }, { wrapper: hideProc })
    expect(result).toEqual({ scrubbed: false, why: expect.stringContaining('/proc/self/stat') })
    // read through this test's own /proc: the value stayed, as the result says
    expect(environ).toContain(`SECRET_T=${SECRET}`)
  })
})
