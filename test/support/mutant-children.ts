// In a mutation run (vitest.mutation.config.ts), a child process that loads this project's code — through
// tsx, from Stryker's sandbox — runs the same mutant as the test that started it: Stryker's instrumented
// code reads the active mutant from __STRYKER_ACTIVE_MUTANT__ when its own global is not set.
import { beforeEach } from 'vitest'

beforeEach(() => {
  const active = (globalThis as { __stryker__?: { activeMutant?: string } }).__stryker__?.activeMutant
  if (active === undefined) delete process.env.__STRYKER_ACTIVE_MUTANT__
  else process.env.__STRYKER_ACTIVE_MUTANT__ = active
})
