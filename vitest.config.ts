import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // they need a Docker engine and images: `npm run test:containers` (test/containers/vitest.config.ts);
    // the soak test runs minutes: `npm run soak` (test/soak/vitest.config.ts)
    exclude: [...configDefaults.exclude, 'test/containers/**', 'test/soak/**'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/support/per-file.ts'],
    // one worker more than cores (vitest's default is one fewer): most files wait on processes, git and
    // PostgreSQL rather than compute, and a third worker fills those waits. On 2 cores: 141 s with 2
    // workers, 101 s with 3, 103–110 s with 4 (the machine is then saturated; README, Quickstart)
    maxWorkers: availableParallelism() + 1,
    // a worker reuses its loaded modules for the next file instead of importing them again (a third of
    // the suite's time was imports): test files keep no module state, and restore what they change of
    // process.env, timers and spies in afterEach
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
