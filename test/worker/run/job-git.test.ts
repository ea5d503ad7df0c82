import { describe, expect, it } from 'vitest'
import { findGit, type Git, GitAbortedError } from '../../../worker/run/git-env.js'
import { bindGit } from '../../../worker/run/job-git.js'
import { repoWithCommit, sharedDir, testDir, write } from '../../support/checks.js'

const GIT = findGit(process.env.PATH, [])
const AGENT = { uid: 4242, gid: 4242 }
const asRoot = process.getuid?.() === 0

// A git that reports what it runs with: uid, HOME, allowed transport, one extra variable and its stdin.
function reportingGit(): Git {
  const dir = sharedDir()
  const script = '#!/bin/sh\nid -u\necho "$HOME"\necho "$GIT_ALLOW_PROTOCOL"\necho "$EXTRA"\ncat\n'
  return { ...GIT, bin: write(dir, 'git', script, 0o755) }
}

async function report(run: Promise<{ stdout: string }>) {
  const [uid, home, transport, extra, input] = (await run).stdout.split('\n')
  return { uid: Number(uid), home, transport, extra, input }
}

describe('the job git', () => {
  it("runs the worker's binary with its HOME, and passes env and input through", async () => {
    const git = reportingGit()
    const seen = await report(
      bindGit(git).run(testDir(), [], { env: { EXTRA: 'index' }, input: Buffer.from('records') }),
    )
    expect(seen).toMatchObject({ home: GIT.home, extra: 'index', input: 'records' })
  })

  it('allows no transport to the runs of the checks and the baseline', async () => {
    expect(await report(bindGit(reportingGit()).run(testDir(), []))).toMatchObject({ transport: 'none' })
  })

  it("allows the clone's one transport, and only to the worker's own runs", async () => {
    const seen = await report(bindGit(reportingGit()).runAsWorker(testDir(), [], { transport: 'https' }))
    expect(seen).toMatchObject({ transport: 'https' })
  })

  it.runIf(asRoot)('runs as the identity it was bound to', async () => {
    const seen = await report(bindGit(reportingGit(), { identity: AGENT }).run(sharedDir(), []))
    expect(seen.uid).toBe(AGENT.uid)
  })

  it.runIf(asRoot)("runs the clone as the worker, not as the job's identity", async () => {
    const git = bindGit(reportingGit(), { identity: AGENT })
    const seen = await report(git.runAsWorker(sharedDir(), [], { transport: 'file' }))
    expect(seen.uid).toBe(process.getuid?.())
  })

  it.runIf(asRoot)('cannot read a repository the identity may not enter', async () => {
    const ws = repoWithCommit()
    const probe = ['rev-parse', '--is-inside-work-tree']
    expect((await bindGit(GIT).run(ws, probe)).exitCode).toBe(0)
    expect((await bindGit(GIT, { identity: AGENT }).run(ws, probe)).exitCode).not.toBe(0)
  })

  it("stops with the job's signal", async () => {
    const job = new AbortController()
    job.abort()
    const git = bindGit(GIT, { signal: job.signal })
    await expect(git.run(testDir(), ['version'])).rejects.toThrow()
    await expect(git.runAsWorker(testDir(), ['version'], { transport: 'file' })).rejects.toThrow()
  })

  it("takes a call's own signal over the job's (a check's time bound)", async () => {
    const job = new AbortController()
    job.abort()
    const git = bindGit(GIT, { signal: job.signal })
    const run = await git.run(testDir(), ['version'], { signal: new AbortController().signal })
    expect(run.exitCode).toBe(0)
  })

  it("ends a run at the call's time bound", async () => {
    const dir = testDir()
    const slow = { ...GIT, bin: write(dir, 'git', '#!/bin/sh\nexec sleep 3\n', 0o755) }
    await expect(bindGit(slow).run(dir, [], { timeoutMs: 100 })).rejects.toThrow(GitAbortedError)
  })

  it("names the worker's git (a clone's credential helper names its binary)", () => {
    expect(bindGit(GIT).git).toBe(GIT)
  })
})
