// A walk's turns: it looks at the clock once every 256 entries, hands the loop back once its slice is used.
import { describe, expect, it } from 'vitest'
import { BATCH, Turns } from '../../../worker/checks/turns.js'

describe('Turns', () => {
  it('asks whether its slice is used up at the end of each batch of 256 entries, and only then', () => {
    // a slice that is always used up: due() says what over() says, at the end of a batch
    const turns = new Turns(new AbortController().signal, -1)
    const due = Array.from({ length: 3 * BATCH }, () => turns.due())
    expect(BATCH).toBe(256)
    expect(due.flatMap((yes, i) => (yes ? [i + 1] : []))).toEqual([256, 512, 768])
  })

  it('gives nothing back while its slice lasts, and starts a new slice once the loop is back', async () => {
    const turns = new Turns(new AbortController().signal, 60_000)
    expect(Array.from({ length: 2 * BATCH }, () => turns.due()).some(Boolean)).toBe(false)
    expect(turns.over()).toBe(false)
    const used = new Turns(new AbortController().signal, 200)
    await new Promise((resolve) => setTimeout(resolve, 250))
    expect(used.over()).toBe(true)
    await used.give()
    expect(used.over()).toBe(false)
  })
})
