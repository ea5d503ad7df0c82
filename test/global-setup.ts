// Builds dist/ (and the CLI's bundle) so tests that spawn the real `preflight` binary run the current
// code. Build mode (-b): when nothing changed since the last build it only compares timestamps, instead
// of recompiling. Its teardown fails the run if the tests left behind what they make per test.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'

export default async function setup() {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.build.json'], {
    stdio: 'inherit',
  })
  // bin/preflight.js runs the bundle `npm run build` makes from tsc's output: made again, or a spawned
  // CLI would run the code of the last `npm run build` (esbuild: a fraction of a second)
  await import('../scripts/bundle-cli.js')
  const before = new Set(leftovers())
  return () => {
    const left = leftovers().filter((x) => !before.has(x))
    if (left.length === 0) return
    // a throw here is printed and the run still exits 0: the exit code says it
    console.error(`the tests left behind ${left.length}: ${left.slice(0, 5).join(', ')}`)
    process.exitCode = 1
  }
}

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
