// Builds dist/ so tests that spawn the real `preflight` binary run the current code. Build mode (-b):
// when nothing changed since the last build it only compares timestamps, instead of recompiling.
import { execFileSync } from 'node:child_process'

export default function setup() {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.build.json'], {
    stdio: 'inherit',
  })
}
