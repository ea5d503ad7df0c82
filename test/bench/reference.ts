// The requirement sets the check benchmark measures (issue 2, "Benchmark").
import type { ContextRequires } from '../../src/contract/index.js'

export const REFERENCE_PATHS = [
  'package.json',
  'src/**/*.ts',
  '.github/workflows/*.yml',
  '**/tsconfig.json',
  'docs/README.md',
  'scripts/setup.sh',
  'node_modules/typescript/package.json',
  '**/*.proto',
  'src/generated/**',
  'pnpm-lock.yaml',
]

const NO_MATCH_RECURSIVE = new Set(['**/*.proto', 'src/generated/**'])

const EXEC = ['git', 'node', 'npm', 'sh', 'python3', 'make', 'pnpm', 'yarn', 'bazel', 'go']

export const SETS = {
  // the whole reference set: paths, exec, git
  reference: { paths: REFERENCE_PATHS, exec: EXEC, git: { worktree: true, history: true } },
  // the same without the two no-match recursive globs (target: under 10 ms warm)
  'no-miss': {
    paths: REFERENCE_PATHS.filter((p) => !NO_MATCH_RECURSIVE.has(p)),
    exec: EXEC,
    git: { worktree: true, history: true },
  },
  // paths only, to compare like with like against the glob baselines
  'paths-only': { paths: REFERENCE_PATHS },
} satisfies Record<string, ContextRequires>

export type SetName = keyof typeof SETS
