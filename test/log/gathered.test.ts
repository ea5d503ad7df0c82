// JSON lines to the process's own stderr off a terminal are gathered: written together after 50 ms or
// 16 KiB, at once (in order) for a warning or an error, and whatever waits when the process exits.
// A real child process with stderr on a pipe, as under a container runtime.
import { execFile, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { flushLogs, gathered } from '../../src/log/gather.js'
import { waitFor } from '../support/wait.js'

const LOG = fileURLToPath(new URL('../../src/log/log.ts', import.meta.url))
const program = (body: string) =>
  `import { createLog } from ${JSON.stringify(LOG)}; const log = createLog({ name: 'coordinator' }); ${body}`

const messages = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).msg as string)

describe('the log gathered off a terminal', () => {
  it('writes what waits when the process exits, in order', async () => {
    const { stderr } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      program(`for (let i = 0; i < 3; i++) log.info('line ' + i); process.exitCode = 0`),
    ])
    expect(messages(stderr)).toEqual(['line 0', 'line 1', 'line 2'])
  })

  it('writes the lines before a warning with it, at once, and an info line within moments', async () => {
    // After the warning the child blocks its event loop for 3 s, so no timer can write for it: the two
    // lines arrive while it is blocked only if the warning wrote them. Then an info line, written by
    // the timer while the child waits on stdin (its exit would write it too).
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        program(`log.info('first'); log.warn('second'); process.stdout.write('blocked\\n');
                 Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
                 log.info('third');
                 process.stdin.resume(); process.stdin.on('end', () => process.exit(0))`),
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    )
    let text = ''
    let out = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk
    })
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
    })
    try {
      await waitFor(() => out.includes('blocked'), { what: 'the child to block', timeoutMs: 20_000 })
      await waitFor(() => messages(text).length === 2, {
        what: 'the warning and the line before it',
        timeoutMs: 2_000,
      })
      expect(messages(text)).toEqual(['first', 'second'])
      await waitFor(() => messages(text).length === 3, { what: 'the info line after it', timeoutMs: 10_000 })
      expect(messages(text)).toEqual(['first', 'second', 'third'])
    } finally {
      child.stdin.end()
      await new Promise((resolve) => child.once('exit', resolve))
    }
  })

  it('writes what waits at once when asked: before a line written to stderr past the log (a fault)', () => {
    const written: string[] = []
    const out = gathered({ write: (lines: string) => written.push(lines) })
    out.write('{"msg":"one"}\n')
    out.write('{"msg":"two"}\n')
    expect(written).toEqual([])
    flushLogs()
    expect(written).toEqual(['{"msg":"one"}\n{"msg":"two"}\n'])
  })
})
