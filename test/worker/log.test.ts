import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createLog, MAX_PENDING_OUTPUT } from '../../worker/log.js'

describe('the worker log', () => {
  // A real stream nobody reads: what a stalled reader of the worker's stdout looks like to it.
  it('holds at most a bounded amount of output for a reader that stalls, and says how much it dropped', async () => {
    const out = new PassThrough()
    const log = createLog(out, new PassThrough())
    const line = 'x'.repeat(16_384)
    for (let i = 0; i < 6_400; i++) log.output('abc', `${i}${line}`) // 100 MiB
    expect(out.writableLength).toBeLessThanOrEqual(MAX_PENDING_OUTPUT + line.length + 64)
    const text: string[] = []
    out.on('data', (chunk: Buffer) => text.push(chunk.toString()))
    await new Promise((r) => setImmediate(r))
    log.output('abc', 'after')
    await new Promise((r) => setImmediate(r))
    const all = text.join('')
    expect(all).toMatch(/\[abc\] … \d+ line\(s\) of output dropped/)
    expect(all.endsWith('[abc] after\n')).toBe(true)
  })

  it('writes every line while the reader keeps up', () => {
    const out = new PassThrough()
    const seen: string[] = []
    out.on('data', (chunk: Buffer) => seen.push(chunk.toString()))
    const log = createLog(out, new PassThrough())
    for (let i = 0; i < 1_000; i++) log.output('p', String(i))
    expect(seen.join('').split('\n').filter(Boolean)).toHaveLength(1_000)
  })
})
