// Running git safely: an environment built from scratch and flags that keep repository-controlled code from running.
import { type ChildProcess, spawn } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type { Readable } from 'node:stream'
import { executableIn } from './executable.js'
import { scratchHomeIn } from './git-home.js'
import { isInside } from './paths.js'

export interface GitRun {
  exitCode: number
  stdout: string
  // stdout as git wrote it: file names are bytes, not always UTF-8
  stdoutBytes: Buffer
  stderr: string
}

// The git the worker trusts, found once (at worker start, or once per `preflight check`) and never
// looked up again: a git planted later on the agent's PATH is never run.
export interface Git {
  // absolute real path of the binary
  bin: string
  // the PATH git's own helpers (ssh for a clone) are found on: the worker's, never the agent's
  path: string | undefined
  // the empty HOME git runs with (git-home.ts), chosen with the binary and kept by whoever holds this Git
  home: string
}

export interface RunGitOptions {
  git: Git
  // the one transport a clone may use (`https`, `ssh`, `git`, `file`); every other git run may use none,
  // so a promisor remote, upload-pack or ssh command named by a workspace's config never runs
  transport?: string
  signal?: AbortSignal
  timeoutMs?: number
  // merged on top of the filtered environment (the baseline passes GIT_INDEX_FILE)
  env?: Record<string, string>
  // run as the agent's uid/gid (--agent-uid): git may read and write only what the agent may, so a
  // workspace whose `.git` setup pointed elsewhere cannot lead it into anything of the worker's
  identity?: { uid: number; gid: number }
  // written to git's stdin (else it reads nothing)
  input?: Buffer
}

// git was not found on PATH or could not be started.
export class GitUnavailableError extends Error {
  override name = 'GitUnavailableError'
}

// git ran past its time bound or was cancelled.
export class GitAbortedError extends Error {
  override name = 'GitAbortedError'
}

const MAX_OUTPUT = 64 * 1024 * 1024

export function gitEnvironment(path: string | undefined, home: string): Record<string, string> {
  const env: Record<string, string> = {
    HOME: home,
    // No global configuration, ignore or attributes file: the agent runs as the same uid and could
    // otherwise plant them (in HOME or ~/.config/git) for the git runs of later dispatches.
    GIT_CONFIG_GLOBAL: '/dev/null',
    XDG_CONFIG_HOME: '/dev/null',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    // git ≥ 2.44 (and Debian's 2.39.5): no lazy fetch of a partial clone's missing objects
    GIT_NO_LAZY_FETCH: '1',
  }
  if (path !== undefined) env.PATH = path
  return env
}

export function gitSafetyArgs(workspace: string, real = realWorkspace(workspace)): string[] {
  const config = [
    // fsmonitor and hooks are commands the repository names: never run them
    'core.fsmonitor=false',
    'core.hooksPath=/dev/null',
    // a workspace owned by another uid must not read as "not a repository"; git compares real paths
    ...[...new Set([workspace, real])].map((dir) => `safe.directory=${dir}`),
  ]
  return ['--no-pager', ...config.flatMap((c) => ['-c', c])]
}

// No transport at all (a partial clone's lazy fetch would run the promisor's upload-pack, ext:: command
// or core.sshCommand), except the one a clone was given. GIT_ALLOW_PROTOCOL acts as protocol.allow=never
// plus protocol.<name>.allow=always for each listed, and — unlike `-c protocol.allow=never` — overrides
// a repository's own protocol.<name>.allow=always. `none` names no transport git has.
export function allowedTransport(transport: string | undefined): { GIT_ALLOW_PROTOCOL: string } {
  return { GIT_ALLOW_PROTOCOL: transport ?? 'none' }
}

function realWorkspace(workspace: string): string {
  return realOrUndefined(workspace) ?? workspace
}

// git from an absolute PATH entry, and only one whose real path is outside every directory in `avoid`
// (workspaces, the workdir): a relative entry, one through `..` or a link into a workspace would run a
// git the workspace ships, which could answer anything. Throws GitUnavailableError when there is none.
// With it, the scratch HOME it will run with (in `homeParent`).
export function findGit(path: string | undefined, avoid: readonly string[], homeParent = tmpdir()): Git {
  if (path === undefined) throw new GitUnavailableError('git is not on PATH (no PATH)')
  const roots = [...new Set(avoid.flatMap((dir) => [dir, realOrUndefined(dir) ?? dir]))]
  for (const dir of path.split(':')) {
    // relative to this process's cwd, which is not the agent's: never a place to trust a git from
    if (!dir.startsWith('/')) continue
    const git = executableIn(dir, 'git')
    const real = git && realOrUndefined(git)
    // the real path is what runs: a link swapped after this check cannot point it elsewhere
    if (real && !roots.some((root) => isInside(real, root)))
      return { bin: real, path, home: scratchHomeIn(homeParent) }
  }
  throw new GitUnavailableError(`git is not on PATH (${path})`)
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path)
  } catch {
    // not there (yet), or not ours to resolve: no real path
  }
  return undefined
}

// git -C <workspace> <safety args> <args>, environment replaced (not extended), bounded in time; stdin
// holds `input` or nothing.
// node:child_process rather than execa: execa's per-spawn setup measured ~1.5 ms more, a seventh of the
// 10 ms budget of a whole verify() that spawns git once.
export async function runGit(workspace: string, args: string[], opts: RunGitOptions): Promise<GitRun> {
  const real = realWorkspace(workspace)
  opts.signal?.throwIfAborted()
  const safety = gitSafetyArgs(workspace, real)
  const child = spawn(opts.git.bin, ['-C', workspace, ...safety, ...args], {
    env: {
      ...gitEnvironment(opts.git.path, opts.git.home),
      ...allowedTransport(opts.transport),
      ...opts.env,
    },
    stdio: [opts.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    // its own process group: a clone's helpers (remote-http, ssh, index-pack) hold its output pipes
    // and must die with it, or a hung transfer would outlive every time bound
    detached: true,
    ...(opts.identity ? { uid: opts.identity.uid, gid: opts.identity.gid } : {}),
  })
  const stop = () => killGroup(child)
  const timer = opts.timeoutMs === undefined ? undefined : setTimeout(stop, opts.timeoutMs)
  opts.signal?.addEventListener('abort', stop)
  // git may exit before reading all of it (a bad argument): that is its answer, not ours to throw
  child.stdin?.on('error', () => {})
  child.stdin?.end(opts.input)
  try {
    const [exitCode, stdout, stderr] = await Promise.all([
      exited(child),
      collect(child.stdout as Readable),
      collect(child.stderr as Readable),
    ])
    if (exitCode === null) throw new GitAbortedError(`git ${args.join(' ')} did not finish`)
    return {
      exitCode,
      stdout: stdout.toString('utf8').replace(/\n$/, ''),
      stdoutBytes: stdout,
      stderr: stderr.toString('utf8').replace(/\n$/, ''),
    }
  } finally {
    // cut short (the output bound, a failed start): stop what still runs; never signal a group whose
    // leader has exited, its id may be someone else's by now
    if (child.exitCode === null && child.signalCode === null) stop()
    clearTimeout(timer)
    opts.signal?.removeEventListener('abort', stop)
  }
}

// SIGKILL to git's process group: git and whatever it started that is still running.
function killGroup(child: ChildProcess): void {
  try {
    // a child that never started has no pid: kill() refuses NaN as it refuses a group that is gone
    process.kill(-Number(child.pid), 'SIGKILL')
  } catch {
    // the group is gone already
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', (err) => reject(new GitUnavailableError(`git could not start: ${err.message}`)))
    child.once('close', (code) => resolve(code))
  })
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk)
    length += chunk.length
    if (length > MAX_OUTPUT) throw new Error('git wrote more output than a check reads')
  }
  return Buffer.concat(chunks)
}
