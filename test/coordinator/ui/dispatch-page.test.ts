// What the page of one dispatch shows: where and how it runs (workspace, worker, labels, priority,
// metadata, deadline), who cancelled it and why, the output of every failed or cancelled one (or why it
// has none), what a check saw and what each event said written out — never raw JSON — and how long each
// step took.
import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { tokens, useTestApp } from '../../support/app.js'
import { cancelled, claimed, exited, expired, running } from '../../support/dispatch-states.js'
import { definition, reportFor } from '../../support/fixtures.js'
import { send, signIn } from '../../support/ui.js'

const h = useTestApp({ maxAttempts: 1 })
const show = async (id: string, query = '') =>
  (await send(h, `/ui/dispatches/${id}${query}`, { cookie: await signIn(h, tokens.operator) })).text
const fact = (name: string, html: string) => new RegExp(`<dt>${name}</dt><dd>${html}`)

describe('the dispatch page', () => {
  it('shows the labels, priority, metadata, deadline, idempotency key and repository it was queued with', async () => {
    const def = definition('page-steering')
    await h.call('POST', '/v1/subagents', { body: def })
    const deadline = new Date(Date.now() + 3_600_000).toISOString()
    const r = await h.call('POST', '/v1/dispatches', {
      body: {
        subagent: def.name,
        workspace: { repo: 'https://git.example.invalid/app.git', ref: 'main' },
        labels: ['gpu', 'region=eu'],
        priority: 7,
        metadata: { task: 'T-1', pr: '42' },
        deadline,
        idempotencyKey: 'ci-7:job-1',
      },
    })
    const page = await show(r.body.id)
    expect(page).toMatch(
      fact('labels', '<ul class="inline"><li><code>gpu</code></li><li><code>region=eu</code>'),
    )
    expect(page).toMatch(fact('priority', '7</dd>'))
    expect(page).toMatch(
      fact(
        'metadata',
        '<dl class="facts"><dt>pr</dt><dd><code>42</code></dd><dt>task</dt><dd><code>T-1</code>',
      ),
    )
    expect(page).toMatch(fact('deadline', `<time datetime="${deadline}">`))
    expect(page).toMatch(fact('idempotency key', '<code>ci-7:job-1</code>'))
    expect(page).toMatch(
      fact('repository', '<code>https://git.example.invalid/app.git</code> at <code>main</code>'),
    )
    await h.call('POST', `/v1/dispatches/${r.body.id}/cancel`, { role: 'orchestrator' })
  })

  it('shows a path workspace as its path, with its setup as a command line, and no repository row', async () => {
    const def = definition('page-path')
    await h.call('POST', '/v1/subagents', { body: def })
    const workspace = { path: '/srv/work/app', setup: ['sh', '-c', 'make gen'] }
    const r = await h.call('POST', '/v1/dispatches', { body: { subagent: def.name, workspace } })
    const page = await show(r.body.id)
    expect(page).toMatch(fact('workspace path', '<code>/srv/work/app</code>'))
    expect(page).toMatch(fact('setup', '<code>sh -c &quot;make gen&quot;</code>'))
    expect(page).not.toContain('<dt>repository</dt>')
    await h.call('POST', `/v1/dispatches/${r.body.id}/cancel`, { role: 'orchestrator' })
  })

  it('shows the worker of the latest claim with what its report said of itself', async () => {
    const def = definition('page-worker')
    const { id, fence } = await claimed(h, def, 'builder-3')
    const report = {
      ...reportFor(def),
      worker: { id: 'builder-3', image: 'toolchain:24', hostname: 'ci-host' },
    }
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body: { ...fence, report } })
    expect(await show(id)).toMatch(
      fact('worker', '<code>builder-3</code> \\(attempt 1\\), image toolchain:24, hostname ci-host'),
    )
  })

  it('says who cancelled a dispatch and why, and what its worker had when it stopped', async () => {
    const { id, fence } = await running(h, { def: definition('page-cancel') })
    await h.call('POST', `/v1/dispatches/${id}/cancel`, {
      role: 'orchestrator',
      body: { reason: 'superseded by #43' },
    })
    await h.call('POST', `/v1/dispatches/${id}/complete`, {
      role: 'worker',
      body: { ...fence, status: 'cancelled', exitCode: 143, detail: 'compiling…\nTerminated' },
    })
    const page = await show(id)
    expect(page).toMatch(
      /<h2 id="cancel">Cancelled<\/h2><dl class="facts"><dt>by<\/dt><dd>orchestrator token \d+<\/dd>/,
    )
    expect(page).toContain('<dt>why</dt><dd>superseded by #43</dd>')
    expect(page).toContain('<h2 id="output">Output when cancelled</h2>')
    expect(page).toContain('<pre>compiling…\nTerminated</pre>')
  })

  it('says why a failed or cancelled dispatch kept no output', async () => {
    const nothingRan = await cancelled(h, definition('page-no-output'))
    expect(await show(nothingRan.id)).toContain('None kept: nothing was running when it was cancelled')
    const silent = await exited(h, 2, { def: definition('page-silent') })
    expect(await show(silent.id)).toContain('None: the agent printed nothing')
  })

  it('says what the agent used that no requirement declares, and what to add', async () => {
    const undeclared = [
      {
        kind: 'exec' as const,
        name: 'pnpm',
        state: 'missing' as const,
        searched: '/usr/local/bin:/usr/bin:/bin',
      },
    ]
    const observed = { source: 'trace' as const, exec: [{ name: 'pnpm' }], paths: [] }
    const d = await exited(h, 127, { def: definition('page-undeclared'), more: { observed, undeclared } })
    const page = await show(d.id)
    expect(page).toContain('Reason: <code>undeclared-requirement</code>')
    expect(page).toContain(
      '<li>pnpm was run and not found on /usr/local/bin:/usr/bin:/bin; no requirement declares it — add exec: [pnpm]</li>',
    )
    expect(page).not.toContain("the agent's own word")
  })

  it("shows an expired dispatch's last fault", async () => {
    const { id } = await expired(h, {
      def: definition('page-fault'),
      fault: 'baseline: git write-tree failed',
    })
    const page = await show(id)
    expect(page).toContain(
      '<h2 id="fault">Last fault (attempt 1)</h2><pre>baseline: git write-tree failed</pre>',
    )
    expect(page).toContain('None: no attempt completed')
  })

  it('writes rejected candidates and every event detail out, never as JSON', async () => {
    const def = definition('page-readable')
    const { id, fence } = await claimed(h, def)
    const event = (step: string, detail: Record<string, unknown>) =>
      h.call('POST', `/v1/dispatches/${id}/events`, { role: 'worker', body: { ...fence, step, detail } })
    await event('setup', { command: null })
    const report = reportFor(def)
    const node = report.results.find((r) => r.requirement === 'node')
    Object.assign(node ?? {}, {
      status: 'unmet',
      reason: 'not-found',
      observed: {
        name: 'node',
        searched: ['/usr/bin'],
        rejected: [{ path: '/opt/node/bin/node', why: 'unreachable' }],
        shallow: false,
      },
    })
    report.outcome = 'unmet'
    await h.call('PUT', `/v1/dispatches/${id}/preflight`, { role: 'worker', body: { ...fence, report } })
    const page = await show(id)
    expect(page).toContain(
      '<dt>rejected candidates</dt><dd><ul class="plain"><li><code>/opt/node/bin/node</code> — the agent&#39;s user cannot reach or run it (<code>unreachable</code>)</li></ul>',
    )
    expect(page).toContain('<dt>PATH searched</dt><dd><ul class="plain"><li><code>/usr/bin</code></li>')
    expect(page).toContain('<dt>shallow</dt><dd>no</dd>')
    expect(page).toContain(
      '<dt>command</dt><dd><span class="note">none (no workspace.setup, no preflight-setup.sh)',
    )
    expect(page).toContain('<dt>worker</dt><dd><code>w1</code></dd>')
    expect(page).toMatch(
      /<dt>outcome<\/dt><dd><code>unmet<\/code><\/dd><dt>decision<\/dt><dd><code>abort<\/code>/,
    )
    // no JSON object anywhere on the page, escaped or not
    expect(page).not.toMatch(/\{&quot;|\{"/)
  })

  it('shows how long each step took: the time to the next event', async () => {
    const { id, fence } = await claimed(h, definition('page-took'))
    await h.call('POST', `/v1/dispatches/${id}/events`, {
      role: 'worker',
      body: { ...fence, step: 'agent', detail: { command: ['claude', '-p', 'fix it'] } },
    })
    // the events' instants, set: created, then claimed 2.5 s later, then the agent 4 min 5 s after that
    for (const [step, at] of [
      ['created', '2026-01-01T00:00:00.000Z'],
      ['claimed', '2026-01-01T00:00:02.500Z'],
      ['agent', '2026-01-01T00:04:07.500Z'],
    ])
      await h.t.db.orm.execute(
        sql`UPDATE dispatches SET events = (
              SELECT jsonb_agg(CASE WHEN e ->> 'step' = ${step} THEN jsonb_set(e, '{at}', to_jsonb(${at}::text)) ELSE e END
                               ORDER BY n)
              FROM jsonb_array_elements(events) WITH ORDINALITY AS x(e, n))
            WHERE id = ${id}`,
      )
    const page = await show(id)
    expect(page).toMatch(/<td data-label="step">created<\/td><td data-label="took">2.5 s<\/td>/)
    expect(page).toMatch(/<td data-label="step">claimed<\/td><td data-label="took">4 min 5 s<\/td>/)
    // the last step is still running
    expect(page).toMatch(
      /<td data-label="step">agent<\/td><td data-label="took"><span class="note">—<\/span>/,
    )
    expect(page).toContain('<dt>command</dt><dd><code>claude -p &quot;fix it&quot;</code>')
    await h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator' })
  })

  it('refreshes itself when asked while the dispatch runs, and offers no refresh once it has ended', async () => {
    const { id } = await claimed(h, definition('page-refresh'))
    const off = await show(id)
    expect(off).not.toContain('http-equiv="refresh"')
    expect(off).toContain(`<a href="/ui/dispatches/${id}?refresh=on">Refresh every 30 s</a>`)
    const on = await show(id, '?refresh=on')
    expect(on).toContain('<meta http-equiv="refresh" content="30"/>')
    expect(on).toContain(`<a href="/ui/dispatches/${id}">Stop refreshing</a>`)
    await h.call('POST', `/v1/dispatches/${id}/cancel`, { role: 'orchestrator' })
    const ended = await show(id, '?refresh=on')
    expect(ended).not.toContain('http-equiv="refresh"')
    expect(ended).not.toContain('Refresh now')
  })
})
