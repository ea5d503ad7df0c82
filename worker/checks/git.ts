// git: the workspace's repository facts, worktree and history, each required to hold (true) or not (false).
import type { GitFact } from '../../src/contract/light.js'
import { Reason } from '../../src/contract/reasons.js'
import { findGit, type GitRun, GitUnavailableError } from '../run/git-env.js'
import { bindGit, type GitRunner } from '../run/job-git.js'
import type { CheckContext, Finding } from './types.js'

export interface GitFacts {
  worktree: boolean
  toplevel: string | null
  head: string | null
  shallow: boolean
}

const NOT_A_REPO: GitFacts = { worktree: false, toplevel: null, head: null, shallow: false }

const FACTS = ['rev-parse', '--is-inside-work-tree', '--is-shallow-repository']
const HEAD = ['--verify', '--quiet', 'HEAD^{commit}']

// Both facts from one git process per verify() call. --show-toplevel makes git give up outside a worktree
// (a bare repository, the inside of .git); only then a second process asks without it.
async function probeGit(ctx: CheckContext): Promise<GitFacts> {
  const git = gitOf(ctx)
  const call = { signal: ctx.signal, timeoutMs: ctx.timeoutMs }
  const run = await git(ctx.workspace, [...FACTS, '--show-toplevel', ...HEAD], call)
  if (isNotARepository(run)) return NOT_A_REPO
  if (run.exitCode === 128 && /must be run in a work tree/.test(run.stderr)) {
    const bare = await git(ctx.workspace, [...FACTS, ...HEAD], call)
    const [inside, shallow, head] = answer(bare).split('\n')
    return {
      worktree: inside === 'true',
      toplevel: null,
      head: known(bare, head),
      shallow: shallow === 'true',
    }
  }
  const [inside, shallow, toplevel, head] = answer(run).split('\n')
  return {
    worktree: inside === 'true',
    toplevel: toplevel ?? null,
    head: known(run, head),
    shallow: shallow === 'true',
  }
}

// The job's git; `preflight check` and direct callers find one on the PATH given, run as the agent.
function gitOf(ctx: CheckContext): GitRunner {
  if (ctx.git) return ctx.git
  return bindGit(findGit(ctx.env.PATH, [ctx.workspace]), ctx.agent ? { identity: ctx.agent } : {}).run
}

function isNotARepository(run: GitRun): boolean {
  return run.exitCode === 128 && /not a git repository/.test(run.stderr)
}

// Exit 1 is --verify finding no commit at HEAD; any other failure is git unable to answer, never an answer.
function answer(run: GitRun): string {
  if (run.exitCode !== 0 && run.exitCode !== 1) {
    throw new Error(`git rev-parse exited ${run.exitCode}: ${run.stderr}`)
  }
  return run.stdout
}

function known(run: GitRun, head: string | undefined): string | null {
  return run.exitCode === 0 && head ? head : null
}

function sharedProbe(ctx: CheckContext): Promise<GitFacts> {
  let probe = ctx.memo.get('git') as Promise<GitFacts> | undefined
  if (!probe) {
    probe = probeGit(ctx)
    ctx.memo.set('git', probe)
  }
  return probe
}

const verdicts: Record<GitFact, { holds: (f: GitFacts) => boolean; unmet: [Reason, Reason] }> = {
  worktree: { holds: (f) => f.worktree, unmet: [Reason.NotAWorktree, Reason.IsAWorktree] },
  history: { holds: (f) => f.head !== null, unmet: [Reason.NoHistory, Reason.HasHistory] },
}

export async function checkGit(requirement: string, ctx: CheckContext): Promise<Finding> {
  if (!Object.hasOwn(verdicts, requirement)) {
    return { status: 'error', reason: Reason.UnknownKind, observed: { fact: requirement } }
  }
  const verdict = verdicts[requirement as GitFact]
  // true: must hold; false: must not hold; anything else was never a declaration of either
  const expected: unknown = ctx.requires.git?.[requirement as GitFact]
  if (typeof expected !== 'boolean') {
    return {
      status: 'error',
      reason: Reason.InvalidRequirement,
      observed: { problem: `git.${requirement} must be true or false` },
    }
  }
  let facts: GitFacts
  try {
    facts = await sharedProbe(ctx)
  } catch (err) {
    if (err instanceof GitUnavailableError) {
      return { status: 'error', reason: Reason.GitUnavailable, observed: { message: err.message } }
    }
    throw err
  }
  const observed = { toplevel: facts.toplevel, head: facts.head, shallow: facts.shallow }
  if (verdict.holds(facts) === expected) return { status: 'met', observed }
  return { status: 'unmet', reason: expected ? verdict.unmet[0] : verdict.unmet[1], observed }
}
