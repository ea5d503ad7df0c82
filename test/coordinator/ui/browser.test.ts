// The operator page in a real browser: Debian's Chromium driven by playwright-core (no browser
// download). Runs when Chromium is installed (PREFLIGHT_CHROMIUM, else Debian's headless shell or its
// full browser: test/support/chromium.ts); without one it says it skipped, or fails with CI=true.
// With PREFLIGHT_UI_SHOTS=1 it also saves screenshots of the pages to test-results/ui/ (for a person
// reviewing a change to them; five full pages cost the run 5 s of CPU, so not by default).
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { tokens, useTestApp } from '../../support/app.js'
import { describeInChromium, launchChromium } from '../../support/chromium.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'

const SHOTS = process.env.PREFLIGHT_UI_SHOTS === '1' ? join(process.cwd(), 'test-results', 'ui') : undefined

describeInChromium('the operator page in Chromium', () => {
  const h = useTestApp()
  let browser: Browser
  // signed in once, by the first test; the others open their pages in it
  let session: BrowserContext
  let base: string
  let close: () => void
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    const server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    close = () => server.close()
    browser = await launchChromium()
    if (SHOTS) mkdirSync(SHOTS, { recursive: true })
    ids.drift = await seedDrift()
    ids.setup = await seedSetupFailure()
  })

  afterAll(async () => {
    await browser?.close()
    close?.()
  })

  async function seedDrift() {
    const def = definition('browser-drift')
    let last = ''
    for (const status of ['met', 'unmet'] as const) {
      last = await queueDispatch(h, def)
      const c = await claim(h)
      const report = reportFor(def, status)
      for (const r of report.results)
        if (status === 'unmet' && r.requirement === 'node')
          r.observed = { name: 'node', searched: ['/usr/bin', '/opt/toolchain/bin'], rejected: [] }
      await h.call('PUT', `/v1/dispatches/${last}/preflight`, {
        role: 'worker',
        body: { ...fenceOf(c), report },
      })
    }
    return last
  }

  // Signs in with the keyboard alone (the token field has focus, Enter submits) from a page that
  // needs a session, and lands back on that page.
  async function signIn(context: BrowserContext): Promise<Page> {
    const page = await context.newPage()
    await page.goto(`${base}/ui/drift`)
    expect(page.url()).toContain('/ui/sign-in?next=')
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('name')")).toBe('token')
    await page.keyboard.type(tokens.operator)
    await page.keyboard.press('Enter')
    await page.waitForURL(`${base}/ui/drift`)
    return page
  }

  async function seedSetupFailure() {
    const id = await queueDispatch(h, definition('browser-setup'))
    const c = await claim(h)
    const body = {
      ...fenceOf(c),
      status: 'setup_failed',
      reason: 'setup-exit',
      detail: 'exited 1; last output:\nERR',
    }
    await h.call('POST', `/v1/dispatches/${id}/complete`, { role: 'worker', body })
    return id
  }

  async function shot(page: Page, name: string) {
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
  }

  async function signedIn(colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
    const page = await session.newPage()
    await page.emulateMedia({ colorScheme })
    return page
  }

  it('signs in with the keyboard and comes back to the page asked for', async () => {
    session = await browser.newContext({ viewport: { width: 1366, height: 768 } })
    const form = await session.newPage()
    await form.goto(`${base}/ui/sign-in`)
    expect(await form.getByLabel('Operator token').isVisible()).toBe(true)
    await shot(form, 'sign-in')
    await form.close()
    const page = await signIn(session)
    expect(await page.getByRole('main').getByRole('heading', { level: 1 }).textContent()).toBe('Drift')
    expect(await page.getByRole('navigation', { name: 'Sections' }).isVisible()).toBe(true)
    await page.close()
  })

  it('lists a setup_failed and a preflight_failed dispatch, filters by subagent, and opens one', async () => {
    const page = await signedIn()
    await page.goto(`${base}/ui/failures`)
    const rows = page.getByRole('main').getByRole('row')
    expect(await rows.filter({ hasText: 'setup_failed' }).filter({ hasText: 'browser-setup' }).count()).toBe(
      1,
    )
    expect(
      await rows.filter({ hasText: 'preflight_failed' }).filter({ hasText: 'browser-drift' }).count(),
    ).toBe(1)
    await shot(page, 'failures')
    await page.getByLabel('subagent').fill('browser-setup')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/subagent=browser-setup/)
    expect(await rows.filter({ hasText: 'browser-drift' }).count()).toBe(0)
    await page.getByRole('link', { name: ids.setup?.slice(0, 8) as string }).click()
    await page.waitForURL(`${base}/ui/dispatches/${ids.setup}`)
    expect(await page.getByRole('heading', { name: 'Setup output' }).isVisible()).toBe(true)
    await page.close()
  })

  it('shows the drifting requirement first on the drift page, and links to its subagent', async () => {
    const page = await signedIn()
    await page.goto(`${base}/ui/drift`)
    const row = page.locator('tr.drifting').first()
    expect(await row.textContent()).toContain('browser-drift')
    expect(await row.textContent()).toContain('drifting since')
    await shot(page, 'drift')
    await page.close()
  })

  it('opens a dispatch and reads its unmet requirement and the PATH searched', async () => {
    const page = await signedIn()
    await page.goto(`${base}/ui/dispatches/${ids.drift}`)
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'node', exact: true }) })
    expect(await row.textContent()).toContain('unmet')
    expect(await row.getByRole('listitem').allTextContents()).toEqual(['/usr/bin', '/opt/toolchain/bin'])
    await shot(page, 'dispatch')
    await page.close()
  })

  it('is dark when the system is, and loads nothing from elsewhere', async () => {
    const page = await signedIn('dark')
    const requests: string[] = []
    page.on('request', (r) => requests.push(r.url()))
    await page.goto(`${base}/ui/drift`)
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor')
    expect(background).toBe('rgb(13, 17, 23)')
    expect(requests.every((url) => url.startsWith(base))).toBe(true)
    await shot(page, 'drift-dark')
    await page.close()
  })

  it('signs out', async () => {
    const page = await signIn(await browser.newContext())
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(`${base}/ui/sign-in`)
    await page.goto(`${base}/ui/drift`)
    expect(page.url()).toContain('/ui/sign-in?next=')
    await page.close()
  })
})
