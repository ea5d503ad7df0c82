// longPoll and countdown on a clock the test moves: a look and a park each take the time the test gives
// them, so the deadline arithmetic is checked to the millisecond without waiting.
import { describe, expect, it } from 'vitest'
import { type Clock, countdown, longPoll, type Poll } from '../../../src/coordinator/dispatch/long-poll.js'

function fakeClock(start = 1_000_000) {
  let t = start
  const clock: Clock = { now: () => t }
  const advance = (ms: number) => {
    t += ms
  }
  return { clock, advance }
}

// A poll whose looks each take `lookMs` and answer the next of `answers` (the last one repeats); a park
// is woken after `wokenAfter` ms when that is sooner than the time it was given, else runs it out.
// Records the ms each park was given.
function pollOf(
  advance: (ms: number) => void,
  {
    answers,
    lookMs = 100,
    wokenAfter = Number.POSITIVE_INFINITY,
    closed = () => false,
  }: {
    answers: string[]
    lookMs?: number
    wokenAfter?: number
    closed?: () => boolean
  },
) {
  const parks: number[] = []
  let looks = 0
  const poll: Poll<string> = {
    look: async () => {
      advance(lookMs)
      return answers[Math.min(looks++, answers.length - 1)] as string
    },
    ready: (answer) => answer === 'ready',
    park: async (_answer, ms) => {
      // a poll that parks for nothing would never end: fail it instead
      if (parks.length >= 100) throw new Error(`still parking after ${parks.join(', ')} ms`)
      parks.push(ms)
      advance(Math.min(ms, wokenAfter))
    },
    closed,
  }
  return { poll, parks, looks: () => looks }
}

const open = new AbortController().signal

describe('longPoll', () => {
  it('answers a ready first look at once, without parking', async () => {
    const { clock, advance } = fakeClock()
    const { poll, parks } = pollOf(advance, { answers: ['ready'] })
    expect(await longPoll(poll, 5_000, { clock, signal: open })).toBe('ready')
    expect(parks).toEqual([])
  })

  it('parks for the time left after each look and answers the last look once waitMs has passed', async () => {
    const { clock, advance } = fakeClock()
    const { poll, parks, looks } = pollOf(advance, { answers: ['a', 'b'] })
    // look (100) → park 900 → look (100): 100 ms over, answered with that look
    expect(await longPoll(poll, 1_000, { clock, signal: open })).toBe('b')
    expect(parks).toEqual([900])
    expect(looks()).toBe(2)
  })

  it('after a wake-up, parks only for what is left of the same wait', async () => {
    const { clock, advance } = fakeClock()
    const { poll, parks } = pollOf(advance, { answers: ['a'], wokenAfter: 300 })
    // looked at 100, 900 left: woken at 400; looked at 500, 500 left: woken at 800; looked at 900, 100
    // left: runs out at 1000; looked at 1100: over
    await longPoll(poll, 1_000, { clock, signal: open })
    expect(parks).toEqual([900, 500, 100])
  })

  it('answers the first ready look after a wake-up, before the wait is over', async () => {
    const { clock, advance } = fakeClock()
    const { poll, parks } = pollOf(advance, { answers: ['a', 'ready', 'a'], wokenAfter: 300 })
    expect(await longPoll(poll, 10_000, { clock, signal: open })).toBe('ready')
    expect(parks).toEqual([9_900])
  })

  it('looks once and never parks with no time to wait', async () => {
    const { clock, advance } = fakeClock()
    const { poll, parks, looks } = pollOf(advance, { answers: ['a'], lookMs: 0 })
    expect(await longPoll(poll, 0, { clock, signal: open })).toBe('a')
    expect(parks).toEqual([])
    expect(looks()).toBe(1)
  })

  it('answers the look without parking once the signal has aborted', async () => {
    const { clock, advance } = fakeClock()
    const { poll, parks } = pollOf(advance, { answers: ['a'] })
    expect(await longPoll(poll, 5_000, { clock, signal: AbortSignal.abort() })).toBe('a')
    expect(parks).toEqual([])
  })

  it('answers the look without parking once the wake-ups have closed', async () => {
    const { clock, advance } = fakeClock()
    const { poll, parks } = pollOf(advance, { answers: ['a'], closed: () => true })
    expect(await longPoll(poll, 5_000, { clock, signal: open })).toBe('a')
    expect(parks).toEqual([])
  })

  it('hands a park the time left as it goes on, for a wait of its own after a wake-up', async () => {
    const { clock, advance } = fakeClock()
    const after: number[] = []
    await longPoll(
      {
        look: async () => 'a',
        ready: () => false,
        park: async (_answer, _ms, left) => {
          advance(700)
          after.push(left())
          advance(300)
        },
        closed: () => false,
      },
      1_000,
      { clock, signal: open },
    )
    expect(after).toEqual([300])
  })
})

describe('countdown', () => {
  it('tells the time left of a wait begun when it was made, negative once over', () => {
    const { clock, advance } = fakeClock()
    const left = countdown(clock, 1_000)
    expect(left()).toBe(1_000)
    advance(400)
    expect(left()).toBe(600)
    advance(1_000)
    expect(left()).toBe(-400)
  })
})
