// Every dispatch that did not succeed, newest first, with the list API's filters and why each ended;
// above them, how many dispatches there are in each status.
import { DISPATCH_STATUSES, type DispatchItem, FAILURE_STATUSES, type Role } from '../../contract/index.js'
import { Code, ErrorBox, Page, type Problem, Refresh, Status } from './layout.js'

export interface FailuresProps {
  items: DispatchItem[]
  filters: { status: string; subagent: string; reason: string; since: string; until: string }
  // dispatches by status, all of them (none when the query was refused)
  counts?: ReadonlyMap<string, number> | undefined
  error?: Problem | undefined
  next?: string | undefined
  role?: Role | undefined
  // the page reloads itself; `cursor`: the page of the list it is
  refresh?: boolean
  cursor?: string | undefined
}

export function FailuresPage(props: FailuresProps) {
  const { items, filters, counts, error, next, role, refresh = false } = props
  const here = { ...filters, ...(props.cursor ? { cursor: props.cursor } : {}) }
  return (
    <Page title="Failures" section="failures" role={role} refresh={refresh}>
      <Refresh path="/ui/failures" query={here} on={refresh} />
      {counts && <Counts counts={counts} />}
      <form class="filters" method="get" action="/ui/failures">
        {refresh && <input type="hidden" name="refresh" value="on" />}
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
        <table class="stack">
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
                <td data-label="created">
                  <time datetime={d.createdAt}>{d.createdAt}</time>
                </td>
                <td data-label="status">
                  <Status status={d.status} />
                </td>
                <td data-label="subagent">
                  <a href={`/ui/failures?subagent=${encodeURIComponent(d.subagent.name)}`}>
                    {d.subagent.name}
                  </a>
                </td>
                <td data-label="why">
                  <Why d={d} />
                </td>
                <td data-label="dispatch">
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

// Every status with its count, in the order of a dispatch's life; a failure's links to its list.
function Counts({ counts }: { counts: ReadonlyMap<string, number> }) {
  const failure = new Set<string>(FAILURE_STATUSES)
  return (
    <section aria-labelledby="counts">
      <h2 id="counts">Dispatches by status</h2>
      <ul class="counts">
        {DISPATCH_STATUSES.map((s) => {
          const n = counts.get(s) ?? 0
          return (
            <li>
              {failure.has(s) && n > 0 ? (
                <a href={`/ui/failures?status=${s}`}>
                  <Status status={s} /> <span class="count">{n}</span>
                </a>
              ) : (
                <>
                  <Status status={s} /> <span class="count">{n}</span>
                </>
              )}
            </li>
          )
        })}
      </ul>
      <p class="note">All dispatches, whatever the filters below.</p>
    </section>
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
