// Debian's Chromium for the page tests, started as this machine needs it: without the flags that keep it
// from phoning home, its background connections are refused by a closed network, many at a time, and
// slow every page down.
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'

// The headless shell (Debian's chromium-headless-shell, Chromium's old headless mode, which Playwright
// itself prefers for headless runs) when it is installed: for the same pages it costs a quarter of the
// full browser's CPU (measured: 0.95 s against 3.8 s for three pages), and the page tests ran ~38 s of
// Chromium's CPU a suite with the full one. Else the full browser, which serves the same tests.
const INSTALLED = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'] as const
export const CHROMIUM =
  process.env.PREFLIGHT_CHROMIUM ?? INSTALLED.find((path) => existsSync(path)) ?? INSTALLED[0]

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
