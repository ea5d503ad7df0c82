// The tests `npm run test:mutation` runs (docs/mutation.md): those that decide a verdict in this process.
// No global setup: none of them runs the built dist/ (a child that needs the code runs the source via tsx),
// and preflight.test.ts makes its database itself (test/support/db.ts).
import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: [
      'test/contract/{contract,light,requirements}.test.ts',
      'test/coordinator/dispatch/{judge,preflight,claim-hints}.test.ts',
      'test/worker/checks/*.test.ts',
      'test/worker/run/git-env.test.ts',
      'test/worker/run/job-git.test.ts',
      'test/worker/run/paths.test.ts',
      'test/worker/claim.test.ts',
      'test/worker/lifecycle.test.ts',
      'test/worker/{verify,env}.test.ts',
    ],
    // it makes 50,000 files (2–3 s) each time it runs, that is for each mutant it reaches; what it times
    // end to end, listing.test.ts and walk.test.ts prove part by part
    exclude: [...configDefaults.exclude, 'test/worker/checks/paths.big-directory.test.ts'],
    // children that load the code run the active mutant too (test/support/mutant-children.ts); the
    // cleanup after each test (test/support/per-file.ts)
    setupFiles: ['test/support/mutant-children.ts', 'test/support/per-file.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
