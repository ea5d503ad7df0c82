// The worker's own git, found as the worker finds it at start. Apart from git-fixtures.ts on purpose:
// finding it runs the code under mutation testing when a module loads, and a test file that loads it only
// for the fixtures' `git()` would be counted as covering that code (docs/mutation.md, "Static mutants").
import { findGit } from '../../worker/run/git-env.js'
import { bindGit, type GitRunner } from '../../worker/run/job-git.js'

// The worker's git as the worker finds it at start: on its own PATH.
export const GIT = findGit(process.env.PATH, [])

// The code under test's git: the filtered environment and safety flags of worker/run/git-env.ts.
export const safeGit: GitRunner = bindGit(GIT).run

// The worker's git bound as a job binds it, without an identity or a signal.
export const JOB_GIT = bindGit(GIT)
