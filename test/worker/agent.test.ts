import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runAgent } from '../../worker/agent.js'
import { diesWithin, removeAll, tempDir } from '../support/git-fixtures.js'

const dirs: string[] = []
afterEach(() => removeAll(dirs))

async function workspace() {
  const dir = await tempDir()
  dirs.push(dir)
  return dir
}

const env = { PATH: process.env.PATH ?? '', TOKEN: 'agent-env' }

// Runs a shell script as the agent and collects the lines it passed on.
async function linesOf(script: string) {
  const lines: string[] = []
  const run = await runAgent({
    workspace: await workspace(),
    command: ['sh', '-c', script],
    env,
    signal: new AbortController().signal,
    onLine: (line) => lines.push(line),
  })
  return { run, lines }
}

describe('runAgent', () => {
  it('runs agent.command in the workspace with the agent environment and streams its lines', async () => {
    const dir = await workspace()
    const lines: string[] = []
    const result = await runAgent({
      workspace: dir,
      command: ['sh', '-c', 'echo one; echo two >&2; echo "$TOKEN" > marker'],
      env,
      signal: new AbortController().signal,
      onLine: (line) => lines.push(line),
    })
    expect(result.exitCode).toBe(0)
    expect(lines.sort()).toEqual(['one', 'two'])
    expect(await readFile(join(dir, 'marker'), 'utf8')).toBe('agent-env\n')
  })

  it('passes a long run of output without a newline on in bounded pieces, and keeps reading', async () => {
    // 20 MB without a newline, then a multi-byte character and CRLF, then a line
    const { run, lines } = await linesOf('head -c 20000000 /dev/zero | tr "\\0" x; printf "é\\r\\nafter\\n"')
    expect(run.exitCode).toBe(0)
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(16_384)
    expect(lines.join('').length).toBe(20_000_000 + 'éafter'.length)
    expect(lines.slice(-2)).toEqual([expect.stringMatching(/xé$/), 'after'])
  })

  it('decodes a character split across writes, keeps surrogate pairs whole, and passes on a last line without a newline', async () => {
    // é as two bytes in two writes; an emoji straddling the 16,384th character; no final newline
    const { run, lines } = await linesOf(
      "printf '\\303'; sleep 0.1; printf '\\251\\n'; head -c 16383 /dev/zero | tr '\\0' a; printf '\\360\\237\\230\\200b\\r\\nlast'",
    )
    expect(run.exitCode).toBe(0)
    expect(lines[0]).toBe('é')
    expect(lines[1]).toBe('a'.repeat(16_383))
    expect(lines[2]).toBe('😀b')
    expect(lines.slice(3)).toEqual(['last'])
  })

  it('ends with the agent even when a process that left its group holds the output open', async () => {
    const dir = await workspace()
    const started = Date.now()
    // the escaped process keeps stdout open for 30 s; the agent itself exits 0 at once
    const script =
      "setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' & while [ ! -s escaped.pid ]; do sleep 0.01; done; echo done; exit 0"
    const run = await runAgent({
      workspace: dir,
      command: ['sh', '-c', script],
      env,
      signal: new AbortController().signal,
      onLine: () => {},
      timeoutMs: 500,
    })
    try {
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(run).toMatchObject({ exitCode: 0, timedOut: false, cancelled: false })
      expect(run.tail).toBe('done')
    } finally {
      process.kill(Number(await readFile(join(dir, 'escaped.pid'), 'utf8')), 'SIGKILL')
    }
  }, 20_000)

  it('ends a line of exactly 16,384 characters at its CRLF, also when CR and LF come in two writes', async () => {
    const { lines } = await linesOf(
      "head -c 16384 /dev/zero | tr '\\0' a; printf '\\r'; sleep 0.1; printf '\\nnext\\n'",
    )
    expect(lines).toEqual(['a'.repeat(16_384), 'next'])
  })

  // 290 KB of output: more than the pipe and the stream's buffer hold, so a reader that stopped would
  // leave the program blocked on a full pipe
  it('keeps reading the output when passing a line on fails', async () => {
    const run = await runAgent({
      workspace: await workspace(),
      command: ['sh', '-c', 'seq 1 50000; echo done'],
      env,
      signal: new AbortController().signal,
      onLine: () => {
        throw new Error('log write failed')
      },
    })
    expect(run.exitCode).toBe(0)
    expect(run.tail.split('\n').at(-1)).toBe('done')
  })

  it('passes the agent exit code through', async () => {
    const dir = await workspace()
    const result = await runAgent({
      workspace: dir,
      command: ['sh', '-c', 'exit 4'],
      env,
      signal: new AbortController().signal,
      onLine: () => {},
    })
    expect(result).toMatchObject({ exitCode: 4, cancelled: false })
  })

  it('stops the agent when its signal is aborted', async () => {
    const dir = await workspace()
    const stop = new AbortController()
    const result = await runAgent({
      workspace: dir,
      // stopped once it is seen running
      command: ['sh', '-c', 'echo started; exec sleep 30'],
      env,
      signal: stop.signal,
      onLine: () => stop.abort(),
    })
    expect(result.cancelled).toBe(true)
  })

  it('stops the processes the agent started when it is stopped', async () => {
    const dir = await workspace()
    const stop = new AbortController()
    const result = await runAgent({
      workspace: dir,
      command: ['sh', '-c', 'sleep 60 & echo $! > child.pid; echo started; wait'],
      env,
      signal: stop.signal,
      onLine: () => stop.abort(),
    })
    expect(result.cancelled).toBe(true)
    expect(await diesWithin(Number(await readFile(join(dir, 'child.pid'), 'utf8')))).toBe(true)
  })

  it('leaves no process of the agent running after the agent exits', async () => {
    const dir = await workspace()
    const result = await runAgent({
      workspace: dir,
      command: ['sh', '-c', 'sleep 60 > /dev/null 2>&1 & echo $! > child.pid'],
      env,
      signal: new AbortController().signal,
      onLine: () => {},
    })
    expect(result.exitCode).toBe(0)
    expect(await diesWithin(Number(await readFile(join(dir, 'child.pid'), 'utf8')))).toBe(true)
  })

  it('looks the program up on the agent PATH, not the worker PATH', async () => {
    const dir = await workspace()
    const result = await runAgent({
      workspace: dir,
      command: ['sh', '-c', 'true'],
      env: { PATH: dir },
      signal: new AbortController().signal,
      onLine: () => {},
    })
    expect(result).toMatchObject({ exitCode: 127, failedToStart: true })
  })
})
