// How a dispatch ended: who cancelled it and why, the output it kept (or why there is none), the last
// fault a worker sent, its completion.
import { type DispatchView, undeclaredText } from '../../contract/index.js'
import { Code, duration, Reason, Status } from './layout.js'
import { who } from './observed.js'

// An instant as a fact of a list: its name, then the time.
export function Instant({ name, at }: { name: string; at: string }) {
  return (
    <>
      <dt>{name}</dt>
      <dd>
        <time datetime={at}>{at}</time>
      </dd>
    </>
  )
}

// Who cancelled it (the role and id of the token, as the API records it), why, and when.
export function CancelFacts({ c }: { c: NonNullable<DispatchView['cancel']> }) {
  return (
    <section aria-labelledby="cancel">
      <h2 id="cancel">Cancelled</h2>
      <dl class="facts">
        <dt>by</dt>
        <dd>{who(c.by)}</dd>
        <dt>why</dt>
        <dd>{c.reason ?? <span class="note">no reason given</span>}</dd>
        <Instant name="at" at={c.at} />
      </dl>
    </section>
  )
}

// The output's last lines the dispatch kept: its completion's detail (setup's when setup failed, the
// agent's when it ran, the stopped program's when cancelled), else the setup-failed event's. A failed or
// cancelled dispatch without any says why there is none.
export function OutputTail({ d }: { d: DispatchView }) {
  const c = d.completion
  const event = d.events.findLast((e) => e.step === 'setup-failed')?.detail as
    | { detail?: unknown }
    | undefined
  const ofCompletion = typeof c?.detail === 'string' && c.detail !== ''
  const detail = ofCompletion ? c?.detail : event?.detail
  if (typeof detail !== 'string' || detail === '') return <NoOutput d={d} />
  const setup = !ofCompletion || c?.status === 'setup_failed'
  const title = setup ? 'Setup output' : c?.status === 'cancelled' ? 'Output when cancelled' : 'Agent output'
  return (
    <section aria-labelledby="output">
      <h2 id="output">{title}</h2>
      {c?.reason && <Reason code={c.reason} />}
      <pre>{detail}</pre>
    </section>
  )
}

const NO_OUTPUT: Partial<Record<DispatchView['status'], string>> = {
  preflight_failed: 'None: preflight stopped the dispatch before its agent started.',
  cancelled:
    'None kept: nothing was running when it was cancelled, or its worker had gone before it could send what it had.',
  expired: 'None: no attempt completed (each lease ran out); the last fault, if a worker sent one, is below.',
  setup_failed: 'None: the worker sent no output with the failure.',
  failed: 'None: the agent printed nothing, or its worker sends no output.',
}

function NoOutput({ d }: { d: DispatchView }) {
  const why = NO_OUTPUT[d.status]
  if (!why) return null
  return (
    <section aria-labelledby="output">
      <h2 id="output">Output</h2>
      {d.completion?.reason && <Reason code={d.completion.reason} />}
      <p class="note">{why}</p>
    </section>
  )
}

// The last fault a worker posted: why it gave an attempt up.
export function LastFault({ d }: { d: DispatchView }) {
  const fault = d.events.findLast((e) => e.step === 'fault')
  const message = (fault?.detail as { message?: unknown } | undefined)?.message
  if (!fault || typeof message !== 'string') return null
  return (
    <section aria-labelledby="fault">
      <h2 id="fault">Last fault (attempt {fault.attempt})</h2>
      <pre>{message}</pre>
      <p class="note">
        At <time datetime={fault.at}>{fault.at}</time>.
      </p>
    </section>
  )
}

// What setup and the agent used that no requirement declares (a worker started with --observe).
export function UndeclaredNeeds({ c }: { c: NonNullable<DispatchView['completion']> }) {
  if (!c.undeclared?.length) return null
  const fromOutput = c.observed?.source === 'output'
  return (
    <section aria-labelledby="undeclared">
      <h2 id="undeclared">Used, and declared by no requirement</h2>
      {fromOutput && (
        <p class="note">
          Read from the output, the agent's own word (the worker had no tracer:{' '}
          {c.observed?.note ?? 'unknown'}).
        </p>
      )}
      <ul>
        {c.undeclared.map((need) => (
          <li>{undeclaredText(need)}</li>
        ))}
      </ul>
    </section>
  )
}

export function CompletionFacts({ c }: { c: NonNullable<DispatchView['completion']> }) {
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
            <dt>exit code</dt>
            <dd>{c.exitCode}</dd>
          </>
        )}
        {c.durationMs !== undefined && (
          <>
            <dt>took</dt>
            <dd>{duration(c.durationMs)}</dd>
          </>
        )}
        {c.outputDropped !== undefined && (
          <>
            <dt>log lines dropped</dt>
            <dd>
              {c.outputDropped}{' '}
              <span class="note">by the worker's log, for a slow reader (the tail is whole)</span>
            </dd>
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
        <Instant name="at" at={c.at} />
      </dl>
    </section>
  )
}
