// The request deadline: 503 when it passes, and the signal a waiting handler asks for aborted then,
// whether it asked before the deadline or after (the signal is made only when asked for).
import type { Context } from 'hono'
import { describe, expect, it } from 'vitest'
import { deadline, requestGone } from '../../../src/coordinator/http/deadline.js'
import { type AppEnv, createRouter, renderError } from '../../../src/coordinator/http/http.js'

function app(ms: number, handler: (c: Context<AppEnv>) => Response | Promise<Response>) {
  const a = createRouter()
  a.use(
    '*',
    deadline(() => ms),
  )
  a.get('/', handler)
  a.onError(renderError)
  return a
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('the request deadline', () => {
  it('answers 503 unavailable when the handler is still working, and aborts the signal it holds', async () => {
    let held: AbortSignal | undefined
    const a = app(50, async (c) => {
      held = requestGone(c)
      await new Promise((r) => held?.addEventListener('abort', r))
      return c.text('late')
    })
    const r = await a.request('/')
    expect(r.status).toBe(503)
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('unavailable')
    expect(held?.aborted).toBe(true)
  })

  it('hands an aborted signal to a handler that asks after the deadline passed', async () => {
    let asked: AbortSignal | undefined
    const a = app(30, async (c) => {
      await sleep(80)
      asked = requestGone(c)
      return c.text('late')
    })
    expect((await a.request('/')).status).toBe(503)
    await sleep(100)
    expect(asked?.aborted).toBe(true)
  })

  it('leaves a request that ends in time alone, its signal never aborted', async () => {
    let asked: AbortSignal | undefined
    const a = app(200, (c) => {
      asked = requestGone(c)
      return c.text('ok')
    })
    const r = await a.request('/')
    expect(r.status).toBe(200)
    await sleep(250)
    expect(asked?.aborted).toBe(false)
  })
})
