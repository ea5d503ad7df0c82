// Fixtures for the worker's tests: real git repositories in temp dirs, process liveness.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

const identity = {
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
}

const fixtureEnv = (cwd: string) => ({ PATH: process.env.PATH ?? '', HOME: cwd, ...identity })
// maintenance.auto=false: a commit would start `git maintenance run --auto`, one more process (80 a run)
const GIT = ['git', '-c', 'init.defaultBranch=main', '-c', 'maintenance.auto=false']

// git for setting fixtures up (not the code under test): a fixed identity, no user or system config and
// none of the test runner's GIT_* variables.
export function git(cwd: string, ...args: string[]): string {
  const [file = 'git', ...rest] = [...GIT, ...args]
  return execFileSync(file, rest, {
    cwd,
    env: fixtureEnv(cwd),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
}

// `dir` made a repository whose one commit holds what is in it, in one process: sh runs git init, add
// and commit, as git() would. A spawn from a test process forks all of it (its page tables: ~10 ms of
// CPU at its usual 300 MB on the CI machine, docs/benchmarks.md, "The test suite's time"), a spawn from sh
// a fraction of that.
export function commitAll(dir: string, message = 'initial'): void {
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`
  const script = [
    ['init', '-q'],
    ['add', '-A'],
    ['commit', '-q', '-m', message],
  ]
    .map((args) => [...GIT, ...args].map(quote).join(' '))
    .join(' && ')
  execFileSync('sh', ['-c', script], { cwd: dir, env: fixtureEnv(dir), stdio: ['ignore', 'pipe', 'pipe'] })
}

// A fresh directory the caller removes (removeAll); it may outlive a test. (checks.ts's testDir
// is one test's own and is removed after it.)
export async function tempDir(prefix = 'preflight-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix))
}

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), content)
  }
}

// A repository with one commit holding `files`.
export async function makeRepo(files: Record<string, string> = { 'README.md': 'hello\n' }): Promise<string> {
  const dir = await tempDir('preflight-repo-')
  await writeFiles(dir, files)
  commitAll(dir)
  return dir
}

export async function removeAll(dirs: string[]): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })))
}

// Dead within `ms`: a SIGKILL is sent at once but takes effect when the kernel next runs the process,
// which on a busy machine is not always before the next line of the test.
export async function diesWithin(pid: number, ms = 2_000): Promise<boolean> {
  const until = Date.now() + ms
  while (alive(pid)) {
    if (Date.now() > until) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

// Running, not a zombie: a killed orphan may wait for a PID 1 that does not reap it.
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

// A partial clone whose promisor remote runs `trap` to fetch (as upload-pack, as core.sshCommand for an
// ssh remote, or as an ext:: remote its own config allows), with HEAD's commit missing: any git that
// reads HEAD and may fetch runs the trap.
export async function promisorTrap(
  via: 'uploadpack' | 'sshCommand' | 'ext',
  marker: string,
): Promise<string> {
  const dir = await makeRepo()
  const trap = join(dir, '.git', 'trap.sh')
  await writeFile(trap, `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 })
  git(dir, 'config', 'core.repositoryformatversion', '1')
  git(dir, 'config', 'extensions.partialClone', 'origin')
  git(dir, 'config', 'remote.origin.promisor', 'true')
  if (via === 'uploadpack') {
    git(dir, 'config', 'remote.origin.url', join(dir, '.git', 'nowhere'))
    git(dir, 'config', 'remote.origin.uploadpack', trap)
  } else if (via === 'ext') {
    // the repository's own config allows ext::, which a command line's protocol.allow=never does not undo
    git(dir, 'config', 'remote.origin.url', `ext::${trap}`)
    git(dir, 'config', 'protocol.ext.allow', 'always')
  } else {
    git(dir, 'config', 'remote.origin.url', 'ssh://example.invalid/repo')
    git(dir, 'config', 'core.sshCommand', trap)
  }
  const head = git(dir, 'rev-parse', 'HEAD')
  await rm(join(dir, '.git', 'objects', head.slice(0, 2), head.slice(2)), { force: true })
  return dir
}
