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
    const output = log.openOutput()
    const line = 'x'.repeat(16_384)
    for (let i = 0; i < 6_400; i++) output.line(`${i}${line}`) // 100 MiB
    // one record's envelope (level, time, pid, host, fields) on top of the line
    expect(out.writableLength).toBeLessThanOrEqual(MAX_PENDING_OUTPUT + line.length + 512)
    const records = read(out)
    await new Promise((r) => setImmediate(r))
    output.line('after')
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
    expect(log.outputDropped()).toBe(notice?.dropped)
  })

  // The issue: a dispatch whose output ended while the buffer was full had its count written before the
  // next dispatch's first line, with that dispatch's id, or never.
  it("writes the count of an output that ends while the reader stalls when it ends, with that output's dispatch", async () => {
    const { out, err, read } = streams()
    const worker = createWorkerLog({ out, err })
    const first = worker.child({ dispatchId: 'd1', attempt: 1, step: 'agent' })
    const output = first.openOutput()
    const line = 'x'.repeat(16_384)
    let written = 0
    for (let i = 0; i < 1_000; i++) {
      if (out.writableLength <= MAX_PENDING_OUTPUT) written++
      output.line(line)
    }
    output.end()
    // the reader comes back before the next dispatch prints
    const records = read(out)
    await new Promise((r) => setImmediate(r))
    const next = worker.child({ dispatchId: 'd2', attempt: 1, step: 'agent' })
    next.openOutput().line('first line of d2')
    await new Promise((r) => setImmediate(r))
    const notices = records().filter((r) => r.dropped !== undefined)
    expect(notices).toEqual([expect.objectContaining({ dispatchId: 'd1', dropped: 1_000 - written })])
    expect(records().at(-1)).toMatchObject({ dispatchId: 'd2', msg: 'first line of d2' })
    expect(first.outputDropped()).toBe(1_000 - written)
    expect(next.outputDropped()).toBe(0)
    // the worker's log counts every dispatch's
    expect(worker.outputDropped()).toBe(1_000 - written)
  })

  // --concurrency 2: two dispatches print at once into one stdout that nobody reads
  it('counts the lines of two outputs that run at once apart, each under its own dispatch', async () => {
    const { out, err, read } = streams()
    const worker = createWorkerLog({ out, err })
    const a = worker.child({ dispatchId: 'd1', attempt: 1, step: 'agent' })
    const b = worker.child({ dispatchId: 'd2', attempt: 1, step: 'agent' })
    const [outA, outB] = [a.openOutput(), b.openOutput()]
    const line = 'x'.repeat(16_384)
    // the buffer fills with d1's lines; then d2 prints 3 lines for every 1 of d1's
    while (out.writableLength <= MAX_PENDING_OUTPUT) outA.line(line)
    for (let i = 0; i < 100; i++) {
      outA.line(line)
      for (let j = 0; j < 3; j++) outB.line(line)
    }
    outB.end()
    outA.end()
    const records = read(out)
    await new Promise((r) => setImmediate(r))
    const counts = records()
      .filter((r) => r.dropped !== undefined)
      .map((r) => [r.dispatchId, r.dropped])
    expect(counts).toEqual([
      ['d2', 300],
      ['d1', 100],
    ])
    expect([a.outputDropped(), b.outputDropped(), worker.outputDropped()]).toEqual([100, 300, 400])
  })

  it('writes no count for an output that dropped nothing', () => {
    const { out, err, read } = streams()
    const records = read(out)
    const output = createWorkerLog({ out, err }).openOutput()
    output.line('one')
    output.end()
    expect(records().map((r) => r.msg)).toEqual(['one'])
  })

  it('writes every line while the reader keeps up', () => {
    const { out, err, read } = streams()
    const records = read(out)
    const output = createWorkerLog({ out, err }).openOutput()
    for (let i = 0; i < 1_000; i++) output.line(String(i))
    expect(records()).toHaveLength(1_000)
  })

  it("writes a program's line to stdout as a record with the dispatch's fields, and its own records to stderr", () => {
    const { out, err, read } = streams()
    const [output, own] = [read(out), read(err)]
    const log = createWorkerLog({ out, err }).child({ dispatchId: 'd1', attempt: 2, step: 'setup' })
    log.openOutput().line('npm ci: added 12 packages')
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
    log.openOutput().line(`remote: https://x-access-token:ghs_agentprinted@git.example.test/r.git ${TOKEN}`)
    log.warn(`POST failed with Authorization: Bearer ${TOKEN}`, { fence: { leaseToken: 'lease-secret-1' } })
    expect(text.join('')).not.toMatch(/ghs_agentprinted|0123456789abcdef|lease-secret-1/)
    expect(text.join('')).toContain('git.example.test/r.git')
  })

  it('writes nothing below its level, output included', () => {
    const { out, err, read } = streams()
    const [output, own] = [read(out), read(err)]
    const log = createWorkerLog({ out, err, level: 'warn' })
    log.openOutput().line('a line')
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
    log.openOutput().line('working')
    expect(own().map((r) => [r.msg, r.step, r.dispatchId, r.attempt])).toEqual([
      ['claimed', 'claim', 'd1', 1],
      ['lease lost', 'agent', 'd1', 1],
    ])
    expect(output()).toEqual([expect.objectContaining({ msg: 'working', step: 'agent', dispatchId: 'd1' })])
  })
})
