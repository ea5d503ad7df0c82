// Every dispatch that did not succeed, newest first, with the list API's filters and why each ended.
import { type DispatchItem, FAILURE_STATUSES } from '../../contract/index.js'
import { Code, ErrorBox, Page, type Problem, Status } from './layout.js'

export interface FailuresProps {
  items: DispatchItem[]
  filters: { status: string; subagent: string; reason: string; since: string; until: string }
  error?: Problem | undefined
  next?: string | undefined
}

export function FailuresPage({ items, filters, error, next }: FailuresProps) {
  return (
    <Page title="Failures" section="failures">
      <form class="filters" method="get" action="/ui/failures">
        <label>
          status
          <select name="status">
            <option value="" selected={filters.status === ''}>
              every failure
            </option>
            {FAILURE_STATUSES.map((s) => (
              <option value={s} selected={filters.status === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          subagent
          <input name="subagent" value={filters.subagent} />
        </label>
        <label>
          reason
          <input name="reason" value={filters.reason} placeholder="not-found" />
        </label>
        <label>
          since (ISO 8601)
          <input name="since" value={filters.since} />
        </label>
        <label>
          until (ISO 8601)
          <input name="until" value={filters.until} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {error ? (
        <ErrorBox problem={error} />
      ) : items.length === 0 ? (
        <p class="note">No failed dispatch matches.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">created</th>
              <th scope="col">status</th>
              <th scope="col">subagent</th>
              <th scope="col">why</th>
              <th scope="col">dispatch</th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <tr>
                <td>
                  <time datetime={d.createdAt}>{d.createdAt}</time>
                </td>
                <td>
                  <Status status={d.status} />
                </td>
                <td>
                  <a href={`/ui/failures?subagent=${encodeURIComponent(d.subagent.name)}`}>
                    {d.subagent.name}
                  </a>
                </td>
                <td>
                  <Why d={d} />
                </td>
                <td>
                  <a href={`/ui/dispatches/${d.id}`}>
                    <code>{d.id.slice(0, 8)}</code>
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <p class="pager">
          <a href={next}>Older</a>
        </p>
      )}
    </Page>
  )
}

function Why({ d }: { d: DispatchItem }) {
  if (d.setup)
    return (
      <>
        setup: <Code code={d.setup.reason} />
        {d.setup.exitCode !== undefined ? ` (exit ${d.setup.exitCode})` : ''}
        {d.setup.outputTail ? <pre>{d.setup.outputTail.split('\n').slice(-3).join('\n')}</pre> : null}
      </>
    )
  if (d.preflight)
    return (
      <ul class="plain">
        {d.preflight.failed.map((r) => (
          <li>
            {r.kind} <code>{r.requirement}</code>: {r.status}
            {r.reason && (
              <>
                {' ('}
                <Code code={r.reason} />)
              </>
            )}
          </li>
        ))}
        {d.preflight.failedCount > d.preflight.failed.length && (
          <li class="note">and {d.preflight.failedCount - d.preflight.failed.length} more</li>
        )}
      </ul>
    )
  if (d.fault) return <>last fault: {d.fault.message}</>
  if (d.exitCode !== undefined) return <>the agent exited {d.exitCode}</>
  return <span class="note">—</span>
}
