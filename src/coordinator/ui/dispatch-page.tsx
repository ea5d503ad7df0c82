// One dispatch: what it ran, its event timeline, each requirement with the facts the worker saw,
// the output tail and the completion.
import type { CheckResult, DispatchEvent, DispatchView } from '../../contract/index.js'
import { Code, Page, Reason, Status } from './layout.js'

export function DispatchPage({ d }: { d: DispatchView }) {
  const ws = d.workspace
  return (
    <Page title={`Dispatch ${d.id}`} section="failures">
      <dl class="facts">
        <dt>status</dt>
        <dd>
          <Status status={d.status} />
        </dd>
        <dt>subagent</dt>
        <dd>
          <a href={`/ui/failures?subagent=${encodeURIComponent(d.subagent.name)}`}>{d.subagent.name}</a>{' '}
          version {d.subagent.version}
        </dd>
        <dt>repository</dt>
        <dd>
          <code>{ws.repo}</code>
          {ws.ref ? (
            <>
              {' '}
              at <code>{ws.ref}</code>
            </>
          ) : null}
        </dd>
        <dt>attempt</dt>
        <dd>
          {d.attempt} of {d.maxAttempts}
        </dd>
        <dt>created</dt>
        <dd>
          <time datetime={d.createdAt}>{d.createdAt}</time>
        </dd>
        <dt>updated</dt>
        <dd>
          <time datetime={d.updatedAt}>{d.updatedAt}</time>
        </dd>
      </dl>
      {d.preflight && <Preflight p={d.preflight} />}
      <OutputTail d={d} />
      {d.completion && <CompletionFacts c={d.completion} />}
      <Timeline events={d.events} total={d.eventCount} />
    </Page>
  )
}

function Preflight({ p }: { p: NonNullable<DispatchView['preflight']> }) {
  return (
    <section aria-labelledby="preflight">
      <h2 id="preflight">
        Preflight: <Status status={p.outcome} /> ({p.decision})
      </h2>
      {p.reason && <Reason code={p.reason} />}
      <table>
        <caption class="note">Requirements, those not met first (attempt {p.attempt})</caption>
        <thead>
          <tr>
            <th scope="col">requirement</th>
            <th scope="col">kind</th>
            <th scope="col">status</th>
            <th scope="col">reason</th>
            <th scope="col">what the worker saw</th>
          </tr>
        </thead>
        <tbody>
          {[...p.results]
            .sort((a, b) => Number(a.status === 'met') - Number(b.status === 'met'))
            .map((r) => (
              <Requirement r={r} />
            ))}
        </tbody>
      </table>
    </section>
  )
}

function Requirement({ r }: { r: CheckResult }) {
  return (
    <tr>
      <th scope="row">
        <code>{r.requirement}</code>
      </th>
      <td>{r.kind}</td>
      <td>
        <Status status={r.status} />
      </td>
      <td>{r.reason ? <Code code={r.reason} /> : ''}</td>
      <td>
        <Facts value={r.observed} />
      </td>
    </tr>
  )
}

// Observed facts as the worker sent them: lists as lists (the PATH searched, the rejected candidates).
function Facts({ value }: { value: Record<string, unknown> }) {
  const entries = Object.entries(value)
  if (entries.length === 0) return <span class="note">nothing</span>
  return (
    <dl class="facts">
      {entries.map(([key, v]) => (
        <>
          <dt>{key}</dt>
          <dd>{fact(v)}</dd>
        </>
      ))}
    </dl>
  )
}

function fact(v: unknown) {
  if (Array.isArray(v)) {
    if (v.length === 0) return <span class="note">none</span>
    return (
      <ul class="plain">
        {v.map((item) => (
          <li>
            <code>{typeof item === 'string' ? item : JSON.stringify(item)}</code>
          </li>
        ))}
      </ul>
    )
  }
  return <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code>
}

// The output's last lines the dispatch kept: its completion's detail (setup's when setup failed, the
// agent's when it ran, the stopped program's when cancelled), else the setup-failed event's.
function OutputTail({ d }: { d: DispatchView }) {
  const c = d.completion
  const event = d.events.findLast((e) => e.step === 'setup-failed')?.detail as
    | { detail?: unknown }
    | undefined
  const ofCompletion = typeof c?.detail === 'string' && c.detail !== ''
  const detail = ofCompletion ? c?.detail : event?.detail
  if (typeof detail !== 'string' || detail === '') return null
  const setup = !ofCompletion || c?.status === 'setup_failed'
  const title = setup ? 'Setup output' : c?.status === 'cancelled' ? 'Output' : 'Agent output'
  return (
    <section aria-labelledby="output">
      <h2 id="output">{title}</h2>
      {setup && c?.reason && <Reason code={c.reason} />}
      <pre>{detail}</pre>
    </section>
  )
}

function CompletionFacts({ c }: { c: NonNullable<DispatchView['completion']> }) {
  return (
    <section aria-labelledby="completion">
      <h2 id="completion">Completion</h2>
      <dl class="facts">
        <dt>status</dt>
        <dd>
          <Status status={c.status} />
        </dd>
        {c.reason && (
          <>
            <dt>reason</dt>
            <dd>
              <Code code={c.reason} />
            </dd>
          </>
        )}
        {c.exitCode !== undefined && (
          <>
            <dt>agent exit code</dt>
            <dd>{c.exitCode}</dd>
          </>
        )}
        {c.durationMs !== undefined && (
          <>
            <dt>duration</dt>
            <dd>{(c.durationMs / 1000).toFixed(1)} s</dd>
          </>
        )}
        {c.baseline && (
          <>
            <dt>baseline</dt>
            <dd>
              HEAD <code>{c.baseline.head ?? '(no commit)'}</code>, tree <code>{c.baseline.tree}</code>
            </dd>
          </>
        )}
        <dt>at</dt>
        <dd>
          <time datetime={c.at}>{c.at}</time>
        </dd>
      </dl>
    </section>
  )
}

function Timeline({ events, total }: { events: DispatchEvent[]; total: number }) {
  return (
    <section aria-labelledby="timeline">
      <h2 id="timeline">Timeline</h2>
      {total > events.length && (
        <p class="note">
          The last {events.length} of {total} events.
        </p>
      )}
      {events.length === 0 ? (
        <p class="note">No events yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">at</th>
              <th scope="col">attempt</th>
              <th scope="col">step</th>
              <th scope="col">detail</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr>
                <td>
                  <time datetime={e.at}>{e.at}</time>
                </td>
                <td>{e.attempt}</td>
                <td>{e.step}</td>
                <td>{e.detail === undefined ? '' : <code>{JSON.stringify(e.detail)}</code>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
