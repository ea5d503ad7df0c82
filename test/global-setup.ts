// Builds dist/ (and the CLI's bundle) so tests that spawn the real `preflight` binary run the current code. Build mode (-b):
// when nothing changed since the last build it only compares timestamps, instead of recompiling.
import { execFileSync } from 'node:child_process'

export default async function setup() {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.build.json'], {
    stdio: 'inherit',
  })
  // bin/preflight.js runs the bundle `npm run build` makes from tsc's output: made again, or a spawned
  // CLI would run the code of the last `npm run build` (esbuild: a fraction of a second)
  await import('../scripts/bundle-cli.js')
}
