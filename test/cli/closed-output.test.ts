// A stdout or stderr whose reader went away: the decision (watchOutput, on emitters standing for the
// streams), then the real binary with its stdout or stderr closed, early or after the first line.
import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { CLOSED_OUTPUT_EXIT, type OutputDeps, watchOutput } from '../../src/cli/closed-output.js'
import { COMMANDS, type Spec } from '../../src/cli/commands.js'
import { testDir } from '../support/checks.js'

const BIN = join(import.meta.dirname, '../../bin/preflight.js')

const errno = (code: string) => Object.assign(new Error(`write ${code}`), { code })

function watched({ running = true, stoppable = false } = {}) {
  const calls: string[] = []
  const deps: OutputDeps = {
    streams: { out: new EventEmitter(), err: new EventEmitter() },
    running: () => running,
    stop: () => {
      calls.push('stop')
      return stoppable
    },
    exit: (code) => {
      calls.push(`exit ${code}`)
    },
    say: (line) => {
      calls.push(`say ${line}`)
    },
  }
  return { deps, calls, output: watchOutput(deps) }
}

describe('watchOutput', () => {
  it('ends a command that has no stop at once with 141, saying nothing', () => {
    const { deps, calls, output } = watched()
    deps.streams.out.emit('error', errno('EPIPE'))
    expect(calls).toEqual(['stop', 'exit 141'])
    expect(output.code()).toBe(CLOSED_OUTPUT_EXIT)
  })

  it('stops a command that stops on SIGTERM instead of ending the process, and keeps 141 for main', () => {
    const { deps, calls, output } = watched({ stoppable: true })
    deps.streams.err.emit('error', errno('EPIPE'))
    expect(calls).toEqual(['stop'])
    expect(output.code()).toBe(141)
  })

  it('ends the process at once when the command has returned', () => {
    const { deps, calls } = watched({ running: false, stoppable: true })
    deps.streams.out.emit('error', errno('EPIPE'))
    expect(calls).toEqual(['exit 141'])
  })

  it('acts on the first error only', () => {
    const { deps, calls } = watched({ stoppable: true })
    deps.streams.out.emit('error', errno('EPIPE'))
    deps.streams.err.emit('error', errno('EPIPE'))
    deps.streams.out.emit('error', errno('EIO'))
    expect(calls).toEqual(['stop'])
  })

  it('takes another write error for a fault: exit 1, said on stderr when stdout failed', () => {
    const out = watched()
    out.deps.streams.out.emit('error', errno('EIO'))
    expect(out.calls).toEqual(['say cannot write to stdout: EIO', 'stop', 'exit 1'])
    const err = watched()
    err.deps.streams.err.emit('error', errno('EIO'))
    expect(err.calls).toEqual(['stop', 'exit 1'])
  })
})

interface Ended {
  code: number | null
  stdout: string
  stderr: string
}

// The binary with its stdout closed before it writes (`stdout`), or its stderr (`stderr`).
function closing(argv: string[], close: 'stdout' | 'stderr'): Promise<Ended> {
  return ended(
    spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] }),
    close === 'stdout' ? 'out' : 'err',
  )
}

// `preflight ARGV | head -1` in bash, with pipefail: its status is the binary's (head's is 0), its
// stdout head's line, its stderr the binary's. A real pipe (64 kB), as a shell makes it; Node's own
// child pipes are socket pairs that hold much more.
function headOne(argv: string[]): Promise<Ended> {
  const script = 'set -o pipefail; "$@" | head -1'
  const args = ['-c', script, 'bash', process.execPath, BIN, ...argv]
  return ended(spawn('bash', args, { stdio: ['ignore', 'pipe', 'pipe'] }))
}

function ended(
  child: ChildProcessByStdio<null, Readable, Readable>,
  destroy?: 'out' | 'err',
): Promise<Ended> {
  let stdout = ''
  let stderr = ''
  if (destroy === 'out') child.stdout.destroy()
  else child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  if (destroy === 'err') child.stderr.destroy()
  else child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

function paths(specs: Record<string, Spec>, path: string[] = []): string[][] {
  return Object.entries(specs).flatMap(([name, spec]) => [
    [...path, name],
    ...paths(spec.commands ?? {}, [...path, name]),
  ])
}

describe('the binary with its output closed', () => {
  // the race of the issue: head exits after the first line, while the help is still being written
  it('survives `preflight --help | head -1` 20 times: exit 0 or 141, never a stack trace', async () => {
    const runs = await Promise.all(Array.from({ length: 20 }, () => headOne(['--help'])))
    for (const run of runs) {
      expect(run.stderr).toBe('')
      expect([0, CLOSED_OUTPUT_EXIT]).toContain(run.code)
      expect(run.stdout).toBe('Usage: preflight [options] [command]\n')
    }
  })

  it('exits 141 quietly when stdout is closed before the --help of any command', async () => {
    const runs = await Promise.all(paths(COMMANDS).map((path) => closing([...path, '--help'], 'stdout')))
    expect(runs.map((r) => [r.code, r.stderr])).toEqual(runs.map(() => [CLOSED_OUTPUT_EXIT, '']))
  })

  it('exits 141 quietly when the reader leaves in the middle of a long report', async () => {
    // 170 kB of JSON: more than a pipe holds, so the write is cut off whatever the timing
    const dir = testDir()
    const requires = join(dir, 'requires.json')
    const paths = Array.from({ length: 256 }, (_, i) => `missing-${i}/${'x'.repeat(200)}/file.txt`)
    const exec = Array.from({ length: 100 }, (_, i) => `no-such-tool-${i}`)
    writeFileSync(requires, JSON.stringify({ paths, exec }))
    const run = await headOne(['check', '--workspace', dir, '--requires', requires, '--format', 'json'])
    expect([run.code, run.stdout, run.stderr]).toEqual([CLOSED_OUTPUT_EXIT, '{\n', ''])
  })

  it('exits 141 when stderr is closed before the one line of bad input is written', async () => {
    const run = await closing(['chek'], 'stderr')
    expect([run.code, run.stdout]).toEqual([CLOSED_OUTPUT_EXIT, ''])
  })
})
