import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // they need a Docker engine and images: `npm run test:containers` (test/containers/vitest.config.ts);
    // the soak test runs minutes: `npm run soak` (test/soak/vitest.config.ts)
    exclude: [...configDefaults.exclude, 'test/containers/**', 'test/soak/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
