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
    // two workers more than cores (vitest's default is one fewer): most files wait on processes, git and
    // PostgreSQL rather than compute, and the extra workers fill those waits. On 2 cores, measured back to
    // back: 80–89 s with 3 workers, 66–78 s with 4, 79 s with 5 (the machine is then saturated)
    maxWorkers: availableParallelism() + 2,
    // a worker reuses its loaded modules for the next file instead of importing them again (a third of
    // the suite's time was imports): test files keep no module state, and restore what they change of
    // process.env, timers and spies in afterEach
    isolate: false,
    // transformed modules kept on disk (node_modules/.experimental-vitest-cache, keyed by content) for the
    // next run: 'transform' 8.8 s → 2 s, 'import' 15 s → 10–11 s a run (a run's sums over its files). A
    // changed source is transformed again (seen: a broken src/log/colour.ts failed its test at once).
    experimental: { fsModuleCache: true },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
