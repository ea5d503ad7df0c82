import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createWorkerLog, MAX_PENDING_OUTPUT, stepLog } from '../../worker/log.js'

const TOKEN = 'worker-token-0123456789abcdef'

function streams() {
  const out = new PassThrough()
  const err = new PassThrough()
  const read = (s: PassThrough) => {
    const text: string[] = []
    s.on('data', (chunk: Buffer) => text.push(chunk.toString()))
    return () =>
      text
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
  }
  return { out, err, read }
}

describe('the worker log', () => {
  // A real stream nobody reads: what a stalled reader of the worker's stdout looks like to it.
  it('holds at most a bounded amount of output for a reader that stalls, and says how much it dropped', async () => {
    const { out, err, read } = streams()
    const log = createWorkerLog({ out, err }).child({ dispatchId: 'd1', attempt: 1, step: 'agent' })
    const line = 'x'.repeat(16_384)
    for (let i = 0; i < 6_400; i++) log.output(`${i}${line}`) // 100 MiB
    // one record's envelope (level, time, pid, host, fields) on top of the line
    expect(out.writableLength).toBeLessThanOrEqual(MAX_PENDING_OUTPUT + line.length + 512)
    const records = read(out)
    await new Promise((r) => setImmediate(r))
    log.output('after')
    await new Promise((r) => setImmediate(r))
    const [notice, last] = records().slice(-2)
    expect(notice).toMatchObject({
      level: 'warn',
      output: true,
      dispatchId: 'd1',
      dropped: expect.any(Number),
    })
    expect(notice?.msg).toMatch(/^… \d+ line\(s\) of output dropped/)
    expect(last).toMatchObject({ level: 'info', output: true, msg: 'after' })
  })

  it('writes every line while the reader keeps up', () => {
    const { out, err, read } = streams()
    const records = read(out)
    const log = createWorkerLog({ out, err })
    for (let i = 0; i < 1_000; i++) log.output(String(i))
    expect(records()).toHaveLength(1_000)
  })

  it("writes a program's line to stdout as a record with the dispatch's fields, and its own records to stderr", () => {
    const { out, err, read } = streams()
    const [output, own] = [read(out), read(err)]
    const log = createWorkerLog({ out, err }).child({ dispatchId: 'd1', attempt: 2, step: 'setup' })
    log.output('npm ci: added 12 packages')
    log.warn('lease lost', { why: '409' })
    expect(output()).toEqual([
      expect.objectContaining({
        name: 'worker',
        output: true,
        dispatchId: 'd1',
        attempt: 2,
        step: 'setup',
        msg: 'npm ci: added 12 packages',
      }),
    ])
    expect(own()).toEqual([expect.objectContaining({ dispatchId: 'd1', step: 'setup', msg: 'lease lost' })])
    expect(own()[0]).not.toHaveProperty('output')
  })

  it("never writes the worker's token or a URL's credentials, in output or in its own records", () => {
    const { out, err } = streams()
    const text: string[] = []
    for (const s of [out, err]) s.on('data', (chunk: Buffer) => text.push(chunk.toString()))
    const log = createWorkerLog({ out, err, secrets: [TOKEN] })
    log.output(`remote: https://x-access-token:ghs_agentprinted@git.example.test/r.git ${TOKEN}`)
    log.warn(`POST failed with Authorization: Bearer ${TOKEN}`, { fence: { leaseToken: 'lease-secret-1' } })
    expect(text.join('')).not.toMatch(/ghs_agentprinted|0123456789abcdef|lease-secret-1/)
    expect(text.join('')).toContain('git.example.test/r.git')
  })

  it('writes nothing below its level, output included', () => {
    const { out, err, read } = streams()
    const [output, own] = [read(out), read(err)]
    const log = createWorkerLog({ out, err, level: 'warn' })
    log.output('a line')
    log.info('claimed')
    log.warn('lease lost')
    expect(output()).toEqual([])
    expect(own().map((r) => r.msg)).toEqual(['lease lost'])
  })
})

describe("a dispatch's step log", () => {
  it('writes the step the dispatch is in now, also through a reference taken in an earlier step', () => {
    const { out, err, read } = streams()
    const [output, own] = [read(out), read(err)]
    const base = createWorkerLog({ out, err }).child({ dispatchId: 'd1', attempt: 1 })
    const { log, enter } = stepLog(base, 'claim')
    const held = log
    held.info('claimed')
    enter('agent')
    held.warn('lease lost')
    log.output('working')
    expect(own().map((r) => [r.msg, r.step, r.dispatchId, r.attempt])).toEqual([
      ['claimed', 'claim', 'd1', 1],
      ['lease lost', 'agent', 'd1', 1],
    ])
    expect(output()).toEqual([expect.objectContaining({ msg: 'working', step: 'agent', dispatchId: 'd1' })])
  })
})
