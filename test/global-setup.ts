// Builds dist/ (and the CLI's bundle) so tests that spawn the real `preflight` binary run the current
// code. Build mode (-b): when nothing changed since the last build it only compares timestamps, instead
// of recompiling. Gives the run a temp directory of its own, on a tmpfs where the machine has one.
// Its teardown fails the run if the tests left behind what they make per test.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive } from '../src/cli/pid-lock.js'
import { dropRunDatabases, runName } from './support/db.js'

export default async function setup() {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.build.json'], {
    stdio: 'inherit',
  })
  // the declarations the package ships, for the tests of the packed package (test/support/pack.ts)
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.types.json'], {
    stdio: 'inherit',
  })
  // bin/preflight.js runs the bundle `npm run build` makes from tsc's output: made again, or a spawned
  // CLI would run the code of the last `npm run build` (esbuild: a fraction of a second)
  await import('../scripts/bundle-cli.js')
  // the run's name: test processes keep their emptied databases for their next suites under it
  // (test/support/db.ts), and the teardown drops them; what a killed run left is removed here
  const run = runName()
  process.env.PREFLIGHT_TEST_RUN = run
  await dropRunDatabases().catch(() => {})
  const runDir = useRunTempDir(run)
  const before = new Set(leftovers())
  return async () => {
    await dropRunDatabases(run).catch((err) =>
      console.error(`the run's test databases were not dropped: ${err.message}`),
    )
    const left = leftovers().filter((x) => !before.has(x))
    try {
      if (runDir) removeTree(runDir)
    } catch (err) {
      left.push(`${runDir} (${(err as Error).message})`)
    }
    if (left.length === 0) return
    // a throw here is printed and the run still exits 0: the exit code says it
    console.error(`the tests left behind ${left.length}: ${left.slice(0, 5).join(', ')}`)
    process.exitCode = 1
  }
}

// TMPDIR for the whole run (the test workers, and the processes they start with the tests'
// environment, inherit it; the end-to-end workers are given an environment of their own and keep
// /tmp): a directory made for the run, mode 1777 as /tmp is, on /dev/shm when that is a tmpfs with
// 1 GiB free that runs programs (the tests write scripts and PATH binaries there). The suite makes and
// removes tens of thousands of files; on the CI machine's disk (ext4 without a journal) each new file
// scans the inodes deleted in the last seconds, which cost the run 30 s of system CPU.
// PREFLIGHT_TEST_TMPDIR names another parent; set to the empty string, the run keeps the usual temp
// directory. The directories of runs whose main process is gone are removed first (on a tmpfs, they
// hold memory).
// GNU rm, not rmSync: a test that failed can leave a tree deeper than PATH_MAX (an agent's, made on
// purpose), on which rmSync overflows its stack.
function removeTree(dir: string): void {
  const rm = spawnSync('rm', ['-rf', '--', dir], { encoding: 'utf8' })
  if (rm.status !== 0) throw new Error(`rm -rf ${dir}: ${rm.stderr.trim() || rm.error?.message}`)
}

function useRunTempDir(run: string): string | undefined {
  const parent = process.env.PREFLIGHT_TEST_TMPDIR ?? (fastTmp('/dev/shm') ? '/dev/shm' : undefined)
  if (!parent) return undefined
  for (const name of readdirSync(parent)) {
    const owner = /^preflight-tests-p(\d+)r/.exec(name)
    if (owner && !alive(Number(owner[1]))) removeTree(join(parent, name))
  }
  const dir = mkdtempSync(join(parent, `preflight-tests-${run}-`))
  chmodSync(dir, 0o1777)
  process.env.TMPDIR = dir
  return dir
}

function fastTmp(dir: string): boolean {
  try {
    const fs = statfsSync(dir)
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < 2 ** 30) return false
    const probe = mkdtempSync(join(dir, 'preflight-probe-'))
    try {
      writeFileSync(join(probe, 'run'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
      return spawnSync(join(probe, 'run')).status === 0
    } finally {
      rmSync(probe, { recursive: true, force: true })
    }
  } catch {
    return false
  }
}

const TMPFS_MAGIC = 0x01021994

// What tests make and must take away: the check tests' temp directories and FUSE mounts (removed after
// each test: test/support/per-file.ts) and the git fixtures' repositories (by the suites that make them).
// Not preflight-work-*: a worker started without --workdir that a test SIGKILLs cannot remove its own.
const MADE = ['preflight-test-', 'preflight-bin-', 'preflight-repo-', 'preflight-claims-', 'preflight-errno-']

function leftovers(): string[] {
  const dirs = readdirSync(tmpdir()).filter((name) => MADE.some((prefix) => name.startsWith(prefix)))
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('preflight-errno '))
  return [...dirs, ...mounts]
}
