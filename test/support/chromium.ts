// Debian's Chromium for the page tests, started as this machine needs it: without the flags that keep it
// from phoning home, its background connections are refused by a closed network, many at a time, and
// slow every page down.
import { chromium } from 'playwright-core'

export const CHROMIUM = process.env.PREFLIGHT_CHROMIUM ?? '/usr/bin/chromium'

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
