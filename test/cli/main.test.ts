// main() run by a test in its own process: a service command's bounded exit (the binary's, `ownsProcess`)
// must not end the test's process. process.exit is replaced by a spy here: a real one would end vitest's
// worker, which is what the guard prevents.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { WORKER_FLUSH_MS } from '../../src/cli/commands.js'
import { main } from '../../src/cli/main.js'

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('main', () => {
  async function refusedWorker(options: { ownsProcess?: boolean }) {
    vi.useFakeTimers()
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never)
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    // refused before it starts anything: no coordinator
    const code = await main(['worker'], options)
    vi.advanceTimersByTime(WORKER_FLUSH_MS + 1)
    return { code, exit }
  }

  it("leaves the caller's process alone when it does not own it", async () => {
    const { code, exit } = await refusedWorker({})
    expect(code).toBe(2)
    expect(exit).not.toHaveBeenCalled()
  })

  it('ends the process it owns with the code, the flush bound after a service command returned', async () => {
    const { code, exit } = await refusedWorker({ ownsProcess: true })
    expect(exit).toHaveBeenCalledWith(code)
  })
})
