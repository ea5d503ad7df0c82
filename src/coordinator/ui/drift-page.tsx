// Per subagent and requirement: how often it was checked and held, when it last held, and the first
// failure after that (drift). Drifting rows come first and say so in words, not colour alone.
import type { SummaryItem } from '../../contract/index.js'
import { ErrorBox, Page, type Problem } from './layout.js'

export interface DriftProps {
  items: SummaryItem[]
  since: string
  until: string
  error?: Problem | undefined
  next?: string | undefined
}

export function DriftPage({ items, since, until, error, next }: DriftProps) {
  const rows = [...items].sort((a, b) => Number(!a.firstUnmetAfterMetAt) - Number(!b.firstUnmetAfterMetAt))
  return (
    <Page title="Drift" section="drift">
      <form class="filters" method="get" action="/ui/drift">
        <label>
          since (ISO 8601)
          <input name="since" value={since} placeholder="2026-12-01T00:00:00Z" />
        </label>
        <label>
          until (ISO 8601)
          <input name="until" value={until} />
        </label>
        <button type="submit">Show</button>
      </form>
      {error ? (
        <ErrorBox problem={error} />
      ) : rows.length === 0 ? (
        <p class="note">No requirement was checked in this window.</p>
      ) : (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">subagent</th>
              <th scope="col">requirement</th>
              <th scope="col">checks</th>
              <th scope="col">met</th>
              <th scope="col">unmet</th>
              <th scope="col">error</th>
              <th scope="col">last met</th>
              <th scope="col">first failure after met</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr class={r.firstUnmetAfterMetAt ? 'drifting' : undefined}>
                <td data-label="subagent">
                  <a href={`/ui/failures?subagent=${encodeURIComponent(r.subagent)}`}>{r.subagent}</a>
                </td>
                <th scope="row">
                  {r.kind} <code>{r.requirement}</code>
                </th>
                <td data-label="checks">{r.checks}</td>
                <td data-label="met">{r.met}</td>
                <td data-label="unmet">{r.unmet}</td>
                <td data-label="error">{r.error}</td>
                <td data-label="last met">{r.lastMetAt ?? <span class="note">never</span>}</td>
                <td data-label="first failure after met">
                  {r.firstUnmetAfterMetAt ? (
                    <span class="status bad">drifting since {r.firstUnmetAfterMetAt}</span>
                  ) : (
                    <span class="note">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <p class="pager">
          <a href={next}>Next page</a>
        </p>
      )}
    </Page>
  )
}
