// Cancel and retry on the dispatch's page: shown to, and taken from, an orchestrator's (or admin's)
// session only, from the page's own origin only; answered as the API's cancel and retry, counted and
// logged as they are.
import { describe, expect, it } from 'vitest'
import { type TestApp, tokens, useTestApp } from '../../support/app.js'
import { cancelled, preflightFailed, queued } from '../../support/dispatch-states.js'
import { definition } from '../../support/fixtures.js'
import { recordingLog } from '../../support/log.js'
import { send, signIn } from '../../support/ui.js'

const { log, records } = recordingLog()
const h = useTestApp({ metricsCacheMs: 0 }, { log })

const retryKeyOf = (html: string) => /name="idempotencyKey" value="([^"]+)"/.exec(html)?.[1]

describe('the actions on a dispatch page', () => {
  it('offers an orchestrator a retry of an ended dispatch and a cancel of a live one, an operator neither', async () => {
    const ended = await cancelled(h, definition('ui-act-shown'))
    const live = await queued(h, definition('ui-act-shown'))
    const orchestrator = await signIn(h, tokens.orchestrator)
    const endedPage = (await send(h, `/ui/dispatches/${ended.id}`, { cookie: orchestrator })).text
    expect(endedPage).toContain(`action="/ui/dispatches/${ended.id}/retry"`)
    expect(endedPage).not.toContain('/cancel"')
    expect(retryKeyOf(endedPage)).toMatch(/^ui-retry:/)
    const livePage = (await send(h, `/ui/dispatches/${live}`, { cookie: orchestrator })).text
    expect(livePage).toContain(`action="/ui/dispatches/${live}/cancel"`)
    expect(livePage).not.toContain('/retry"')
    const admin = await signIn(h, tokens.admin)
    expect((await send(h, `/ui/dispatches/${live}`, { cookie: admin })).text).toContain('Cancel dispatch')
    const operator = await signIn(h, tokens.operator)
    for (const id of [ended.id, live]) {
      const page = (await send(h, `/ui/dispatches/${id}`, { cookie: operator })).text
      expect(page).not.toContain('<form class="action"')
    }
    await drain(h)
  })

  it('retries: queues the same version and workspace, and shows the new dispatch, which names the first', async () => {
    const { id } = await preflightFailed(h, { def: definition('ui-retry') })
    const cookie = await signIn(h, tokens.orchestrator)
    const page = await send(h, `/ui/dispatches/${id}`, { cookie })
    const res = await send(h, `/ui/dispatches/${id}/retry`, {
      cookie,
      form: { idempotencyKey: retryKeyOf(page.text) as string },
    })
    expect(res.status).toBe(303)
    const to = res.headers.get('location') as string
    const newId = to.slice('/ui/dispatches/'.length)
    expect(newId).not.toBe(id)
    const view = (await h.call('GET', `/v1/dispatches/${newId}`)).body
    expect(view).toMatchObject({ status: 'queued', subagent: { name: 'ui-retry', version: 1 } })
    const shown = await send(h, to, { cookie })
    expect(shown.text).toContain(`<dt>retry of</dt><dd><a href="/ui/dispatches/${id}">`)
    await drain(h)
  })

  it('queues one dispatch for a retry form sent twice', async () => {
    const { id } = await cancelled(h, definition('ui-retry-twice'))
    const cookie = await signIn(h, tokens.orchestrator)
    const form = {
      idempotencyKey: retryKeyOf((await send(h, `/ui/dispatches/${id}`, { cookie })).text) as string,
    }
    const first = await send(h, `/ui/dispatches/${id}/retry`, { cookie, form })
    const second = await send(h, `/ui/dispatches/${id}/retry`, { cookie, form })
    expect(second.headers.get('location')).toBe(first.headers.get('location'))
    const list = await h.call('GET', '/v1/dispatches?subagent=ui-retry-twice')
    expect(list.body.items).toHaveLength(2)
    await drain(h)
  })

  it("cancels with the session's token as who and the form's reason as why, counted once in /metrics", async () => {
    const id = await queued(h, definition('ui-cancel'))
    const before = await endedCancelled()
    const cookie = await signIn(h, tokens.orchestrator)
    const res = await send(h, `/ui/dispatches/${id}/cancel`, { cookie, form: { reason: '  wrong branch  ' } })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`/ui/dispatches/${id}`)
    const view = (await h.call('GET', `/v1/dispatches/${id}`)).body
    const tokenId = (await h.call('GET', '/v1/tokens')).body.items.find(
      (t: { role: string }) => t.role === 'orchestrator',
    ).id
    expect(view.status).toBe('cancelled')
    expect(view.cancel).toMatchObject({ by: { role: 'orchestrator', tokenId }, reason: 'wrong branch' })
    const shown = (await send(h, `/ui/dispatches/${id}`, { cookie })).text
    expect(shown).toContain(
      `<dt>by</dt><dd>orchestrator token ${tokenId}</dd><dt>why</dt><dd>wrong branch</dd>`,
    )
    expect(await endedCancelled()).toBe(before + 1)
  })

  it('answers a cancel of an ended dispatch and a retry of a live one as the API does: 409 invalid-state', async () => {
    const ended = await cancelled(h, definition('ui-conflict'))
    const live = await queued(h, definition('ui-conflict'))
    const cookie = await signIn(h, tokens.orchestrator)
    const retry = await send(h, `/ui/dispatches/${live}/retry`, { cookie, form: {} })
    expect(retry.status).toBe(409)
    expect(retry.text).toContain('<code>invalid-state</code> the dispatch has not ended (queued)')
    await h.call('POST', `/v1/dispatches/${ended.id}/cancel`, { role: 'orchestrator' })
    await send(h, `/ui/dispatches/${live}/cancel`, { cookie, form: {} })
    // cancelled again: the first cancel's who and why stay
    expect((await send(h, `/ui/dispatches/${live}/cancel`, { cookie, form: {} })).status).toBe(303)
    const unknown = await send(h, '/ui/dispatches/00000000-0000-4000-8000-000000000000/retry', {
      cookie,
      form: {},
    })
    expect(unknown.status).toBe(404)
    expect(unknown.text).toContain('<code>not-found</code>')
  })

  it("refuses a reason over 1,024 characters with the API's 400, and changes nothing", async () => {
    const id = await queued(h, definition('ui-long-reason'))
    const cookie = await signIn(h, tokens.orchestrator)
    const res = await send(h, `/ui/dispatches/${id}/cancel`, { cookie, form: { reason: 'é'.repeat(1025) } })
    expect(res.status).toBe(400)
    expect(res.text).toContain('<code>invalid-request</code> invalid form: reason')
    expect((await h.call('GET', `/v1/dispatches/${id}`)).body.status).toBe('queued')
    await drain(h)
  })

  // the guard: an operator may read a dispatch, not act on it (403, as the API's role check)
  it.each(['cancel', 'retry'])(
    'refuses %s from an operator session with 403, and changes nothing',
    async (action) => {
      const id = action === 'cancel' ? await queued(h, definition('ui-guard')) : (await cancelled(h)).id
      const cookie = await signIn(h, tokens.operator)
      const res = await send(h, `/ui/dispatches/${id}/${action}`, { cookie, form: {} })
      expect(res.status).toBe(403)
      expect(res.text).toContain('<code>forbidden</code> this route needs the role orchestrator')
      const after = await h.call(
        'GET',
        `/v1/dispatches?subagent=${action === 'cancel' ? 'ui-guard' : 'frontend-fixer'}&status=queued`,
      )
      expect(after.body.items.map((d: { id: string }) => d.id)).toEqual(action === 'cancel' ? [id] : [])
      await drain(h)
    },
  )

  // the guard: a form another site's page posts with the session's cookie (were a browser to send it)
  it.each(['cancel', 'retry'])(
    'refuses a %s posted from another site with 403, and changes nothing',
    async (action) => {
      const id =
        action === 'cancel'
          ? await queued(h, definition(`ui-csrf-${action}`))
          : (await cancelled(h, definition(`ui-csrf-${action}`))).id
      const cookie = await signIn(h, tokens.orchestrator)
      const res = await send(h, `/ui/dispatches/${id}/${action}`, {
        cookie,
        form: {},
        origin: 'https://evil.example',
      })
      expect(res.status).toBe(403)
      const all = (await h.call('GET', `/v1/dispatches?subagent=ui-csrf-${action}`)).body.items as {
        status: string
      }[]
      expect(all).toHaveLength(1)
      expect(all[0]?.status).toBe(action === 'cancel' ? 'queued' : 'cancelled')
      await drain(h)
    },
  )

  it('answers an action without a session with 401', async () => {
    const { id } = await cancelled(h)
    expect((await send(h, `/ui/dispatches/${id}/retry`, { form: {} })).status).toBe(401)
  })

  it('logs and counts each action by its route', async () => {
    const { id } = await cancelled(h)
    const cookie = await signIn(h, tokens.orchestrator)
    records.length = 0
    await send(h, `/ui/dispatches/${id}/retry`, { cookie, form: {} })
    await send(h, `/ui/dispatches/${id}/cancel`, { cookie, form: {} })
    const routes = records
      .filter((r) => r.msg === 'request')
      .map((r) => `${r.fields.method} ${r.fields.route}`)
    expect(routes).toEqual(['POST /ui/dispatches/:id/retry', 'POST /ui/dispatches/:id/cancel'])
    const text = await (await h.app.request('/metrics')).text()
    expect(text).toContain(
      'preflight_http_request_duration_seconds_count{method="POST",route="/ui/dispatches/:id/retry",status="303"}',
    )
    expect(text).toContain(
      'preflight_http_request_duration_seconds_count{method="POST",route="/ui/dispatches/:id/cancel",status="303"}',
    )
    await drain(h)
  })
})

async function endedCancelled(): Promise<number> {
  const text = await (await h.app.request('/metrics')).text()
  const line = text
    .split('\n')
    .find((l) => l.startsWith('preflight_dispatches_ended_total{status="cancelled",reason=""}'))
  return Number(line?.split(' ')[1] ?? 0)
}

// Cancels everything still queued, so that the next test's claim takes its own dispatch.
async function drain(app: TestApp) {
  const page = await app.call('GET', '/v1/dispatches?status=queued&limit=500')
  for (const d of page.body.items as { id: string }[])
    await app.call('POST', `/v1/dispatches/${d.id}/cancel`, { role: 'orchestrator' })
}
