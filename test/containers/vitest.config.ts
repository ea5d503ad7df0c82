import { resolve } from 'node:path'
import { defineConfig } from 'vitest/config'

// `npm run test:containers` (through run.sh, which supplies the engine and the stand-in images).
// One file at a time: each starts its own containers, and the machine has two cores.
export default defineConfig({
  root: resolve(import.meta.dirname, '..', '..'),
  test: {
    include: ['test/containers/**/*.test.ts'],
    globalSetup: ['test/containers/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
})
