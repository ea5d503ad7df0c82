// Set up before each test file (setupFiles in vitest.config.ts and vitest.mutation.config.ts): the
// cleanup of support modules that make things per test. A support module's own top-level afterEach was
// registered only in the first file of a vitest worker that imported it: with isolate: false the module
// stays loaded for the next files, whose temp directories and FUSE mounts were then left behind (101
// mounts and their servers, from a day of runs).
import { afterEach } from 'vitest'
import { removeTestDirs } from './checks.js'
import { unmountAll } from './failing-mount.js'

afterEach(() => {
  unmountAll()
  removeTestDirs()
})
