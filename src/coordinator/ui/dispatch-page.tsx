// One dispatch: what it ran and where, who cancelled it and why, each requirement with the facts the
// worker saw, the output tail, the completion, its event timeline; and, for an orchestrator, its
// actions.
import {
  type CheckResult,
  type DispatchView,
  isFinal,
  type Role,
  type Workspace,
} from '../../contract/index.js'
import { Actions } from './dispatch-actions.js'
import {
  CancelFacts,
  CompletionFacts,
  Instant,
  LastFault,
  OutputTail,
  UndeclaredNeeds,
} from './dispatch-ending.js'
import { Timeline } from './dispatch-timeline.js'
import { Code, duration, Page, Reason, Refresh, Status } from './layout.js'
import { argvText, Fields } from './observed.js'

export interface DispatchProps {
  d: DispatchView
  role?: Role | undefined
  // the actions, for a session that may take them
  actions?: { retryKey: string } | undefined
  refresh?: boolean
}

export function DispatchPage({ d, role, actions, refresh = false }: DispatchProps) {
  // a dispatch that has ended changes no more: nothing to refresh for
  const live = !isFinal(d.status)
  return (
    <Page title={`Dispatch ${d.id}`} section="failures" role={role} refresh={refresh && live}>
      {live && <Refresh path={`/ui/dispatches/${d.id}`} on={refresh} />}
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
        <WorkspaceFacts ws={d.workspace} />
        <Worker d={d} />
        <dt>attempt</dt>
        <dd>
          {d.attempt} of {d.maxAttempts}
        </dd>
        <dt>priority</dt>
        <dd>{d.priority}</dd>
        {d.labels && d.labels.length > 0 && (
          <>
            <dt>labels</dt>
            <dd>
              <ul class="inline">
                {d.labels.map((l) => (
                  <li>
                    <code>{l}</code>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        {d.metadata && Object.keys(d.metadata).length > 0 && (
          <>
            <dt>metadata</dt>
            <dd>
              {/* the orchestrator's own keys, as they are: not the worker's fields of observed.tsx */}
              <dl class="facts">
                {Object.entries(d.metadata).map(([key, value]) => (
                  <>
                    <dt>{key}</dt>
                    <dd>
                      <code>{value}</code>
                    </dd>
                  </>
                ))}
              </dl>
            </dd>
          </>
        )}
        {d.deadline && <Instant name="deadline" at={d.deadline} />}
        {d.idempotencyKey && (
          <>
            <dt>idempotency key</dt>
            <dd>
              <code>{d.idempotencyKey}</code>
            </dd>
          </>
        )}
        <RetryOf d={d} />
        <Instant name="created" at={d.createdAt} />
        <Instant name="updated" at={d.updatedAt} />
      </dl>
      {actions && <Actions d={d} retryKey={actions.retryKey} />}
      {d.cancel && <CancelFacts c={d.cancel} />}
      {d.preflight && <Preflight p={d.preflight} />}
      {d.completion && <UndeclaredNeeds c={d.completion} />}
      <OutputTail d={d} />
      <LastFault d={d} />
      {d.completion && <CompletionFacts c={d.completion} />}
      <Timeline events={d.events} total={d.eventCount} />
    </Page>
  )
}

// Where it runs: a repository (at a ref) cloned by the worker, or a path on the worker, and the setup.
function WorkspaceFacts({ ws }: { ws: Workspace }) {
  return (
    <>
      {ws.path && (
        <>
          <dt>workspace path</dt>
          <dd>
            <code>{ws.path}</code> <span class="note">on the worker</span>
          </dd>
        </>
      )}
      {ws.repo && (
        <>
          <dt>repository</dt>
          <dd>
            <code>{ws.repo}</code>
            {ws.ref && (
              <>
                {' '}
                at <code>{ws.ref}</code>
              </>
            )}
            {ws.path && <span class="note"> (the path is used)</span>}
          </dd>
        </>
      )}
      {ws.setup && (
        <>
          <dt>setup</dt>
          <dd>
            <code>{argvText(ws.setup)}</code>
          </dd>
        </>
      )}
    </>
  )
}

// The worker of the latest claim, with what its report said of itself.
function Worker({ d }: { d: DispatchView }) {
  const claim = d.events.findLast((e) => e.step === 'claimed')
  const id = (claim?.detail as { workerId?: unknown } | undefined)?.workerId
  if (typeof id !== 'string') return null
  const self = d.preflight?.attempt === claim?.attempt ? d.preflight?.worker : undefined
  const facts = typeof self === 'object' && self !== null ? (self as Record<string, unknown>) : {}
  const about = ['image', 'hostname', 'node']
    .filter((k) => typeof facts[k] === 'string')
    .map((k) => `${k} ${facts[k]}`)
  return (
    <>
      <dt>worker</dt>
      <dd>
        <code>{id}</code> (attempt {claim?.attempt}){about.length > 0 && <>, {about.join(', ')}</>}
      </dd>
    </>
  )
}

function RetryOf({ d }: { d: DispatchView }) {
  const created = d.events.find((e) => e.step === 'created')
  const of = (created?.detail as { retryOf?: unknown } | undefined)?.retryOf
  if (typeof of !== 'string') return null
  return (
    <>
      <dt>retry of</dt>
      <dd>
        <a href={`/ui/dispatches/${of}`}>
          <code>{of}</code>
        </a>
      </dd>
    </>
  )
}

function Preflight({ p }: { p: NonNullable<DispatchView['preflight']> }) {
  return (
    <section aria-labelledby="preflight">
      <h2 id="preflight">
        Preflight: <Status status={p.outcome} /> ({p.decision})
      </h2>
      {p.reason && <Reason code={p.reason} />}
      <table class="stack">
        <caption class="note">Requirements, those not met first (attempt {p.attempt})</caption>
        <thead>
          <tr>
            <th scope="col">requirement</th>
            <th scope="col">kind</th>
            <th scope="col">status</th>
            <th scope="col">reason</th>
            <th scope="col">took</th>
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
      <td data-label="kind">{r.kind}</td>
      <td data-label="status">
        <Status status={r.status} />
      </td>
      <td data-label="reason">{r.reason ? <Code code={r.reason} /> : ''}</td>
      <td data-label="took">{duration(r.durationMs)}</td>
      <td data-label="saw">
        <Fields value={r.observed} />
      </td>
    </tr>
  )
}
