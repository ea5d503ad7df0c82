// One git runner per job: the worker's git (binary, PATH, HOME), the uid it runs as and the job's signal,
// bound once, so no step can pick another git, widen its environment or forget the slot uid.
import { type Git, type GitRun, type RunGitOptions, runGit } from './git-env.js'

// What one git run may add to what the job bound.
export interface GitCall {
  // a narrower signal than the job's (a check's own time bound); the job's otherwise
  signal?: AbortSignal
  timeoutMs?: number
  // on top of the filtered environment (the baseline's GIT_INDEX_FILE)
  env?: Record<string, string>
  // written to git's stdin (else it reads nothing)
  input?: Buffer
}

export type GitRunner = (cwd: string, args: string[], call?: GitCall) => Promise<GitRun>

export interface JobGit {
  // the worker's git, found once at its start (a clone's credential helper names its binary)
  git: Git
  // as the job's identity when it has one (--agent-uid): git reads and writes only what the agent may,
  // so a workspace whose `.git` points elsewhere cannot lead it into anything of the worker's. No
  // transport: a promisor remote or ssh command named by the workspace's config never runs.
  run: GitRunner
  // as the worker, with the one transport a clone may use: only prepare's clone, into a directory the
  // worker made and hands over to the identity afterwards
  runAsWorker(cwd: string, args: string[], call: GitCall & { transport: string }): Promise<GitRun>
}

export interface GitBinding {
  identity?: RunGitOptions['identity']
  // the job's: aborted when the lease is lost or the worker stops waiting
  signal?: AbortSignal
}

export function bindGit(git: Git, bound: GitBinding = {}): JobGit {
  const options = (call: GitCall | undefined): RunGitOptions => ({
    git,
    signal: call?.signal ?? bound.signal,
    timeoutMs: call?.timeoutMs,
    env: call?.env,
    input: call?.input,
  })
  return {
    git,
    run: (cwd, args, call) => runGit(cwd, args, { ...options(call), identity: bound.identity }),
    runAsWorker: (cwd, args, call) => runGit(cwd, args, { ...options(call), transport: call.transport }),
  }
}
