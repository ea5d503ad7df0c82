// The prepare step: a fresh directory with a clone of workspace.repo at workspace.ref, or an allowed workspace.path.
import { mkdir, realpath, rm } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import {
  REPO_SECRET_MESSAGE,
  redactRepo,
  repoHasSecret,
  SetupReason,
  type Workspace,
} from '../src/contract/index.js'
import { type CloneCredentials, credentialArgs } from './clone-credentials.js'
import { defaultConfig } from './config.js'
import { agentDirs, handOver, makePrivateDirs } from './identity.js'
import { begin, type Ending, type Job } from './job.js'
import { refuseByPatterns } from './repo-allow.js'
import { GitAbortedError, GitUnavailableError } from './run/git-env.js'
import type { JobGit } from './run/job-git.js'
import { isInside } from './run/paths.js'
import { removeAgentTrees } from './run/remove.js'

export type Prepared = { ok: true; dir: string } | { ok: false; reason: SetupReason; detail: string }

// The step as the dispatch runs it: the slot uid's HOME and TMPDIR made, the workspace prepared and
// handed to that uid, and everything of it removed when the dispatch ends.
export async function prepare(job: Job): Promise<Prepared> {
  await begin(job, 'prepare')
  const { config } = job.deps
  const { name, identity } = job
  const clone = job.claim.dispatch.workspace.path === undefined
  // A clone's directory is ours even when the clone failed half-way; a workspace.path never is. It goes
  // at the end with the slot uid's own directories, in one removal.
  const workspace = clone ? join(config.workdir, name) : undefined
  const own = identity ? agentDirs(config.workdir, name) : []
  if (workspace || identity) job.onClose((ending) => removeAtEnd(job, workspace, own, ending))
  if (identity) await makePrivateDirs(config.workdir, name, identity)
  const prepared = await prepareWorkspace({
    workspace: job.claim.dispatch.workspace,
    workdir: config.workdir,
    name,
    roots: config.roots,
    git: job.git,
    allowLocalRepos: config.allowLocalRepos,
    repoAllow: config.repoAllow,
    cloneCredentials: config.cloneCredentials,
    signal: job.signal,
    timeoutMs: config.cloneTimeoutMs,
    remove: (dir) => removeAll(job, [dir]),
  })
  // the clone becomes the agent's; a workspace.path stays whose it is
  if (prepared.ok && clone && identity) await handOver(prepared.dir, identity)
  return prepared
}

// The dispatch's clone (unless --keep-failed keeps it) and the slot uid's directories, in one removal.
async function removeAtEnd(job: Job, workspace: string | undefined, own: string[], ending: Ending) {
  const keep = workspace !== undefined && job.deps.config.keepFailed && ending !== 'succeeded'
  if (keep) job.log.info('kept workspace', { dir: workspace, ending })
  await removeAll(job, [...(workspace && !keep ? [workspace] : []), ...own])
}

// With an identity, by a walk that follows no link, as other uids may write in them
// (worker/run/remove.ts); without one the agent is the worker's own uid, and fs.rm serves.
async function removeAll(job: Job, paths: string[]): Promise<void> {
  if (job.identity) await removeAgentTrees(paths, job.identity)
  else for (const dir of paths) await rm(dir, { recursive: true, force: true })
}

export interface PrepareOptions {
  workspace: Workspace
  // where fresh directories are made; the dispatch's own directory is `dir` below it
  workdir: string
  name: string
  roots: readonly string[]
  // the job's git; the clone runs as the worker (the caller hands it over afterwards)
  git: JobGit
  // clone local paths and file:// too (tests, demos); by default only remotes, so a dispatch cannot
  // copy a repository from the worker's own disk (the reason workspace.path needs a root)
  allowLocalRepos?: boolean
  // --repo-allow patterns; none: every remote of an allowed transport
  repoAllow?: readonly string[]
  // for the clone's own git runs only
  cloneCredentials?: CloneCredentials
  signal?: AbortSignal
  timeoutMs?: number
  // removes what a worker that died left at `<workdir>/<name>` (with an agent uid: a walk that follows
  // no link, worker/run/remove.ts); fs.rm by default
  remove?: (dir: string) => Promise<void>
}

// The clone (or the allowed path) for one dispatch. A clone goes to `<workdir>/<name>`; the caller
// removes that directory afterwards whether or not the clone succeeded.
export async function prepareWorkspace(opts: PrepareOptions): Promise<Prepared> {
  if (opts.workspace.path !== undefined) return allowedPath(opts.workspace.path, opts.roots)
  if (!opts.workspace.repo)
    return {
      ok: false,
      reason: SetupReason.NoWorkspace,
      detail: 'the dispatch names neither workspace.repo nor workspace.path',
    }
  // both before any git runs: a refused remote is never contacted
  const refused =
    refuseRepo(opts.workspace.repo, opts.allowLocalRepos ?? false) ??
    refuseByPatterns(opts.workspace.repo, opts.repoAllow ?? [])
  if (refused) return { ok: false, reason: SetupReason.RepoNotAllowed, detail: refused }
  const dir = join(opts.workdir, opts.name)
  await (opts.remove ?? removeTree)(dir)
  await mkdir(opts.workdir, { recursive: true })
  // closed from the start: git would make it 0755, and another slot's agent that entered it while the
  // clone ran could stay there (a cwd) and read the tree once it is handed over
  await mkdir(dir, { mode: 0o700 })
  const failure = await cloneAt(opts.workspace.repo, opts.workspace.ref, dir, opts).catch((err: unknown) =>
    gitFault(err, opts),
  )
  return failure ?? { ok: true, dir }
}

const removeTree = (dir: string) => rm(dir, { recursive: true, force: true })

// workspace.path only when its real path is inside the real path of a --workspace-root (symlinks resolved).
export async function allowedPath(path: string, roots: readonly string[]): Promise<Prepared> {
  const refused = {
    ok: false as const,
    reason: SetupReason.PathNotAllowed,
    detail: `${path} is not inside a --workspace-root of this worker (${roots.join(', ') || 'none given'})`,
  }
  if (!isAbsolute(path)) return refused
  const real = await realpath(path).catch(() => undefined)
  if (!real) return refused
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => undefined)
    if (realRoot && isInside(real, realRoot)) return { ok: true, dir: real }
  }
  return refused
}

// Why a repo value may not be cloned, or undefined. `<helper>::<address>` names a remote helper
// (ext:: runs a command, fd:: reads descriptors): never from a dispatch.
// A password or token in the URL is refused by the coordinator too; a coordinator of an older version
// may still hand one out, and the detail of the refusal goes back to it, so it never quotes the secret.
export function refuseRepo(repo: string, allowLocal: boolean): string | undefined {
  if (repoHasSecret(repo)) return `${redactRepo(repo)}: ${REPO_SECRET_MESSAGE}`
  if (repo.startsWith('-')) return `${repo} reads as an option`
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(repo)) return `${repo} names a git remote helper`
  if (!allowLocal && !isRemote(repo))
    return `${repo} is not a remote repository and this worker was not started with --allow-local-repos`
  return undefined
}

// A URL of a network transport, or git's scp-like form (a ":" before any "/", as git itself reads it).
function isRemote(repo: string): boolean {
  return transportOf(repo) !== 'file'
}

// The one transport git may use to clone `repo`, named as git's protocol.<name>.allow names it. Any
// other spelling is `file`: with protocol.allow=never and only this one allowed, a value git would read
// as a local path (`x:/path` through a `./x:` link, say) is refused by git itself, not only by us.
export function transportOf(repo: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(repo)?.[1]?.toLowerCase()
  if (scheme === 'https' || scheme === 'http' || scheme === 'git') return scheme
  if (scheme === 'ssh' || scheme === 'git+ssh' || scheme === 'ssh+git') return 'ssh'
  if (scheme === undefined && /^[^/]+:/.test(repo)) return 'ssh'
  return 'file'
}

// git missing or past its time bound is the clone's failure; a cancelled dispatch is not.
function gitFault(err: unknown, opts: Pick<PrepareOptions, 'signal' | 'timeoutMs'>): Prepared {
  if (opts.signal?.aborted || !(err instanceof GitAbortedError || err instanceof GitUnavailableError))
    throw err
  const limit = opts.timeoutMs ?? defaultConfig.cloneTimeoutMs
  const why = err instanceof GitAbortedError ? `did not finish within ${limit} ms` : err.message
  return { ok: false, reason: SetupReason.CloneFailed, detail: `git clone: ${why}` }
}

type GitOpts = Pick<
  PrepareOptions,
  'workdir' | 'git' | 'cloneCredentials' | 'repoAllow' | 'signal' | 'timeoutMs'
>

async function cloneAt(repo: string, ref: string | undefined, dir: string, opts: GitOpts) {
  // on the command line of each run, never written to the clone's .git/config, which the checks read
  const transport = transportOf(repo)
  const credentials = credentialArgs(opts.cloneCredentials, transport, opts.git.git.bin)
  // an allowed remote must not hand the clone on to one the patterns would refuse
  const redirects = opts.repoAllow?.length ? ['-c', 'http.followRedirects=false'] : []
  const call = { transport, timeoutMs: opts.timeoutMs ?? defaultConfig.cloneTimeoutMs, signal: opts.signal }
  const git = (cwd: string, args: string[]) =>
    opts.git.runAsWorker(cwd, [...credentials, ...redirects, ...args], call)
  // `--` keeps a repo value like "--upload-pack=…" from being read as an option. --no-hardlinks: a
  // local clone (--allow-local-repos) shares no file with its source, which becomes the agent's.
  // --template= (none): no sample hooks or description, 16 files fewer to copy, hand over and remove;
  // the two directories setup scripts and tools write to (info/exclude, hooks/) are made empty below.
  const args = ['clone', '--quiet', '--no-hardlinks', '--template=', ...(ref ? ['--no-checkout'] : []), '--']
  const cloned = await git(opts.workdir, [...args, repo, dir])
  if (cloned.exitCode !== 0) {
    return {
      ok: false as const,
      reason: SetupReason.CloneFailed,
      detail: `git clone ${repo} failed:\n${tail(cloned.stderr)}`,
    }
  }
  for (const made of ['info', 'hooks']) await mkdir(join(dir, '.git', made), { recursive: true })
  if (!ref) return undefined
  const commit = await resolveRef(dir, ref, git)
  if (!commit)
    return {
      ok: false as const,
      reason: SetupReason.RefNotFound,
      detail: `${ref} is neither a branch, a tag nor a commit of ${repo}`,
    }
  const checkout = await git(dir, ['checkout', '--quiet', '--detach', commit])
  if (checkout.exitCode !== 0) {
    return {
      ok: false as const,
      reason: SetupReason.CloneFailed,
      detail: `git checkout ${ref} failed:\n${tail(checkout.stderr)}`,
    }
  }
  return undefined
}

// A branch of the origin, a tag or a commit id, in that order. Never an option: each candidate ends in
// ^{commit}, which no rev-parse option takes, and --end-of-options says so to git as well.
async function resolveRef(
  dir: string,
  ref: string,
  git: (cwd: string, args: string[]) => Promise<{ exitCode: number; stdout: string }>,
): Promise<string | undefined> {
  for (const candidate of [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref]) {
    const res = await git(dir, [
      'rev-parse',
      '--verify',
      '--quiet',
      '--end-of-options',
      `${candidate}^{commit}`,
    ])
    if (res.exitCode === 0) return res.stdout.trim()
  }
  return undefined
}

function tail(text: string): string {
  return text.length > 2000 ? `…${text.slice(-2000)}` : text
}
