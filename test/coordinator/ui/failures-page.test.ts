// The failures page's counts of dispatches by status, and its refresh (a link, and every 30 s when
// asked, until turned off). The list itself: routes.test.ts.
import { describe, expect, it } from 'vitest'
import { tokens, useTestApp } from '../../support/app.js'
import { cancelled, exited, preflightFailed, setupFailed } from '../../support/dispatch-states.js'
import { definition } from '../../support/fixtures.js'
import { send, signIn } from '../../support/ui.js'

// its own database: the counts are of every dispatch in it
const h = useTestApp()
const count = (status: string, n: number) =>
  new RegExp(`<span class="status [a-z]+">${status}</span> <span class="count">${n}</span>`)

describe('the failures page', () => {
  it('counts the dispatches in each status, and links a failure status to its list', async () => {
    await setupFailed(h, { def: definition('counts') })
    await setupFailed(h, { def: definition('counts') })
    await preflightFailed(h, { def: definition('counts') })
    await exited(h, 0, { def: definition('counts') })
    await cancelled(h, definition('counts'))
    const page = (await send(h, '/ui/failures', { cookie: await signIn(h) })).text
    expect(page).toMatch(count('setup_failed', 2))
    expect(page).toMatch(count('preflight_failed', 1))
    expect(page).toMatch(count('succeeded', 1))
    expect(page).toMatch(count('cancelled', 1))
    expect(page).toMatch(count('expired', 0))
    expect(page).toContain('<a href="/ui/failures?status=setup_failed"><span class="status bad">setup_failed')
    // a status the list does not take, or a failure with none, is no link
    expect(page).not.toContain('status=cancelled')
    expect(page).not.toContain('status=expired')
  })

  it('refreshes every 30 s only when asked, keeping the filters, and says how to stop', async () => {
    const cookie = await signIn(h, tokens.orchestrator)
    const off = (await send(h, '/ui/failures?subagent=counts', { cookie })).text
    expect(off).not.toContain('http-equiv="refresh"')
    expect(off).toContain('<a href="/ui/failures?subagent=counts">Refresh now</a>')
    expect(off).toContain('<a href="/ui/failures?subagent=counts&amp;refresh=on">Refresh every 30 s</a>')
    const on = (await send(h, '/ui/failures?subagent=counts&refresh=on', { cookie })).text
    expect(on).toContain('<meta http-equiv="refresh" content="30"/>')
    expect(on).toContain('<a href="/ui/failures?subagent=counts">Stop refreshing</a>')
    // filtering again keeps it on
    expect(on).toContain('<input type="hidden" name="refresh" value="on"/>')
  })

  it('refreshes a later page of the list as that page, by its cursor', async () => {
    const cookie = await signIn(h)
    const first = await h.call('GET', '/v1/dispatches?status=setup_failed&limit=1')
    expect(first.body.nextCursor).not.toBeNull()
    // the cursor after the list API's first page of one: a later page
    const cursor = encodeURIComponent(first.body.nextCursor)
    const paged = (await send(h, `/ui/failures?status=setup_failed&refresh=on&cursor=${cursor}`, { cookie }))
      .text
    expect(paged).toContain('<meta http-equiv="refresh" content="30"/>')
    expect(paged).toContain(`cursor=${cursor}&amp;refresh=on">Refresh now</a>`)
  })
})
