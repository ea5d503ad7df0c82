// StrykerJS over the code that decides a verdict (docs/mutation.md). `npm run test:mutation`.
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // CI runs against the last full run's results (docs/mutation.md, "Incremental runs"): only mutants in
  // changed code, or reached by changed tests, run again. `STRYKER_FORCE=1 npm run test:mutation` runs all.
  incremental: true,
  incrementalFile: '.ci/mutation-baseline.json',
  mutate: [
    'worker/checks/*.ts',
    '!worker/checks/types.ts',
    'worker/run/{git-env,git-home,job-git,paths}.ts',
    'src/coordinator/dispatch/judge.ts',
    'worker/lifecycle.ts',
    'worker/claim.ts',
  ],
  concurrency: 2,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowEmojis: false, logTests: false },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['dist', 'coverage', 'reports', '.preflight', '.ci/node24', '*.log'],
  timeoutMS: 5_000,
}
