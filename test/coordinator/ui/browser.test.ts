// The operator page in a real browser: Debian's Chromium driven by playwright-core (no browser
// download). Runs when Chromium is installed (PREFLIGHT_CHROMIUM, else Debian's headless shell or its
// full browser: test/support/chromium.ts); without one it says it skipped, or fails with CI=true.
// With PREFLIGHT_UI_SHOTS=1 it also saves screenshots of the pages to test-results/ui/ (for a person
// reviewing a change to them; a full page costs the run about 1 s of CPU, so not by default).
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { tokens, useTestApp } from '../../support/app.js'
import { describeInChromium, launchChromium } from '../../support/chromium.js'
import { exited } from '../../support/dispatch-states.js'
import { claim, definition, fenceOf, queueDispatch, reportFor } from '../../support/fixtures.js'

// A phone held upright: no page may be wider.
const NARROW = { width: 420, height: 900 }

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
    ids.details = await seedDetails()
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

  // A path dispatch with labels, priority, metadata and a deadline, whose report saw a rejected
  // candidate: nearly every fact the page has, at once.
  async function seedDetails() {
    const def = definition('browser-details')
    await h.call('POST', '/v1/subagents', { body: def })
    const created = await h.call('POST', '/v1/dispatches', {
      body: {
        subagent: def.name,
        workspace: {
          path: '/srv/workspaces/frontend-monorepo/packages/checkout',
          setup: ['pnpm', 'install'],
        },
        labels: ['gpu', 'region=eu-west-1'],
        priority: 10,
        metadata: { task: 'JIRA-4711', pr: 'https://git.example.invalid/app/pull/4242' },
        timeoutMs: 7_200_000,
      },
    })
    const id = created.body.id as string
    // a worker with the dispatch's labels (a claim takes only dispatches whose labels it has)
    const claimed = await h.call('POST', '/v1/worker/claim', {
      role: 'worker',
      body: { workerId: 'builder-eu-3', labels: ['gpu', 'region=eu-west-1'] },
    })
    const fence = fenceOf(claimed.body)
    await h.call('POST', `/v1/dispatches/${id}/events`, {
      role: 'worker',
      body: { ...fence, step: 'setup', detail: { command: ['pnpm', 'install'] } },
    })
    const report = reportFor(def)
    for (const r of report.results)
      if (r.requirement === 'node')
        Object.assign(r, {
          status: 'unmet',
          reason: 'not-found',
          observed: {
            name: 'node',
            searched: ['/usr/local/bin', '/usr/bin'],
            rejected: [{ path: '/opt/toolchains/node-v24.11.0-linux-x64/bin/node', why: 'unreachable' }],
          },
        })
    report.outcome = 'unmet'
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body: { ...fence, report } })
    return id
  }

  // Signs in with the keyboard alone (the token field has focus, Enter submits) from a page that
  // needs a session, and lands back on that page.
  async function signIn(context: BrowserContext, token = tokens.operator, path = '/ui/drift'): Promise<Page> {
    const page = await context.newPage()
    await page.goto(`${base}${path}`)
    expect(page.url()).toContain('/ui/sign-in?next=')
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('name')")).toBe('token')
    await page.keyboard.type(token)
    await page.keyboard.press('Enter')
    await page.waitForURL(`${base}${path}`)
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
    expect(await form.getByLabel('Token').isVisible()).toBe(true)
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

  it('shows a dispatch in full: its workspace, steering, worker, rejected candidates and readable timeline', async () => {
    const page = await signedIn()
    await page.goto(`${base}/ui/dispatches/${ids.details}`)
    const facts = page.getByRole('main').locator('dl.facts').first()
    expect(await facts.textContent()).toContain('/srv/workspaces/frontend-monorepo/packages/checkout')
    expect(await facts.textContent()).toContain('region=eu-west-1')
    expect(await facts.textContent()).toContain('JIRA-4711')
    expect(await facts.textContent()).toContain('builder-eu-3')
    expect(await page.getByText("the agent's user cannot reach or run it").count()).toBe(1)
    expect(await page.locator('body').textContent()).not.toMatch(/\{"/)
    await shot(page, 'dispatch-details')
    await page.close()
  })

  it('shows what a failed agent used that its definition does not declare, and what to add', async () => {
    const undeclared = [
      {
        kind: 'exec' as const,
        name: 'pnpm',
        state: 'missing' as const,
        searched: '/usr/local/bin:/usr/bin:/bin',
      },
      { kind: 'exec' as const, name: 'jq', state: 'present' as const, path: '/usr/bin/jq' },
    ]
    const observed = {
      source: 'trace' as const,
      exec: [{ name: 'pnpm' }, { name: 'jq', path: '/usr/bin/jq' }],
      paths: [],
    }
    const d = await exited(h, 127, { def: definition('browser-undeclared'), more: { observed, undeclared } })
    const page = await signedIn()
    await page.goto(`${base}/ui/dispatches/${d.id}`)
    const section = page.getByRole('region', { name: 'Used, and declared by no requirement' })
    expect(await section.getByRole('listitem').allTextContents()).toEqual([
      'pnpm was run and not found on /usr/local/bin:/usr/bin:/bin; no requirement declares it — add exec: [pnpm]',
      'jq was found at /usr/bin/jq, by luck; no requirement declares it — add exec: [jq]',
    ])
    expect(await page.getByText('undeclared-requirement').count()).toBeGreaterThan(0)
    await shot(page, 'dispatch-undeclared')
    await page.close()
  })

  it('lets an orchestrator cancel a dispatch with a reason, then retry it, and shows the retry', async () => {
    const id = await queueDispatch(h, definition('browser-cancel'))
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } })
    const page = await signIn(context, tokens.orchestrator, `/ui/dispatches/${id}`)
    await page.getByLabel('Why (optional)').fill('the toolchain image is broken')
    await page.getByRole('button', { name: 'Cancel dispatch' }).click()
    await page.getByRole('heading', { name: 'Cancelled' }).waitFor()
    expect(await page.locator('#cancel + dl').textContent()).toContain('the toolchain image is broken')
    await shot(page, 'dispatch-cancelled')
    await page.getByRole('button', { name: 'Retry' }).click()
    await page.waitForURL((url) => url.pathname !== `/ui/dispatches/${id}`)
    // it names the dispatch it retries, among its facts (and in its first event)
    const facts = page.getByRole('main').locator('dl.facts').first()
    expect(await facts.getByRole('link', { name: id }).isVisible()).toBe(true)
    expect(await page.getByRole('main').locator('.status').first().textContent()).toBe('queued')
    await shot(page, 'dispatch-retried')
    const retried = new URL(page.url()).pathname.split('/').at(-1) as string
    await h.call('POST', `/v1/dispatches/${retried}/cancel`, { role: 'orchestrator' })
    await context.close()
  })

  it.each([
    ['failures', () => '/ui/failures'],
    ['dispatch', () => `/ui/dispatches/${ids.details}`],
    ['drift', () => '/ui/drift'],
  ])('fits the %s page in a 420 px wide window, no wider', async (name, path) => {
    const page = await session.newPage()
    await page.setViewportSize(NARROW)
    await page.goto(`${base}${path()}`)
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(NARROW.width)
    expect(await page.evaluate('document.body.scrollWidth')).toBeLessThanOrEqual(NARROW.width)
    await shot(page, `${name}-narrow`)
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
