import { resolve } from 'node:path'
import { defineConfig } from 'vitest/config'

// `npm run soak` (SOAK_DISPATCHES=n for a shorter run): the soak test alone, on the built dist/.
export default defineConfig({
  root: resolve(import.meta.dirname, '..', '..'),
  test: {
    include: ['test/soak/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
})
