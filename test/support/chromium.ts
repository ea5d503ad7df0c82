// Debian's Chromium for the page tests, started as this machine needs it: without the flags that keep it
// from phoning home, its background connections are refused by a closed network, many at a time, and
// slow every page down. And what the page tests do without one: skip, or fail with CI=true.
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'
import { describe, it } from 'vitest'

// The headless shell (Debian's chromium-headless-shell, Chromium's old headless mode, which Playwright
// itself prefers for headless runs) when it is installed: for the same pages it costs a quarter of the
// full browser's CPU (measured: 0.95 s against 3.8 s for three pages), and the page tests ran ~38 s of
// Chromium's CPU a suite with the full one. Else the full browser, which serves the same tests.
const INSTALLED = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'] as const
export const CHROMIUM =
  process.env.PREFLIGHT_CHROMIUM ?? INSTALLED.find((path) => existsSync(path)) ?? INSTALLED[0]

const CHROMIUM_MISSING = `Chromium is missing (no ${CHROMIUM}): apt-get install -y chromium-headless-shell, or set PREFLIGHT_CHROMIUM to a Chromium binary`

// What the page tests do: run with a Chromium; without one skip, unless CI=true, where a skip would let a
// run pass that never opened a page.
export function pageTestsPlan(installed: boolean, env: NodeJS.ProcessEnv): 'run' | 'skip' | 'fail' {
  if (installed) return 'run'
  return env.CI === 'true' ? 'fail' : 'skip'
}

// describe() for page tests: `tests` with a Chromium; without one a warning that they skipped, or with
// CI=true one failing test that says what is missing.
export function describeInChromium(name: string, tests: () => void): void {
  const plan = pageTestsPlan(existsSync(CHROMIUM), process.env)
  if (plan === 'fail') {
    describe(name, () => {
      it('has a Chromium to drive (CI=true: page tests fail instead of skipping)', () => {
        throw new Error(CHROMIUM_MISSING)
      })
    })
    return
  }
  if (plan === 'skip') console.warn(`page tests skipped: ${CHROMIUM_MISSING}`)
  describe.runIf(plan === 'run')(name, tests)
}

export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
