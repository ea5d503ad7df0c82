// A dispatch's events in order: when, which attempt, the step, how long until the next event (the
// step's time), and what it said, written out (observed.tsx).
import type { DispatchEvent } from '../../contract/index.js'
import { duration } from './layout.js'
import { Fields } from './observed.js'

// A long text in an event (a setup's output tail) is cut to its last line, as the CLI prints it: the
// whole of it is under the page's output.
const LINE_CHARS = 120

export function Timeline({ events, total }: { events: DispatchEvent[]; total: number }) {
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
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">at</th>
              <th scope="col">attempt</th>
              <th scope="col">step</th>
              <th scope="col">took</th>
              <th scope="col">detail</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e, i) => (
              <tr>
                <td data-label="at">
                  <time datetime={e.at}>{e.at}</time>
                </td>
                <td data-label="attempt">{e.attempt}</td>
                <td data-label="step">{e.step}</td>
                <td data-label="took">{took(e, events[i + 1])}</td>
                <td data-label="detail">
                  <Detail e={e} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

// The time from this event to the next: how long its step ran (the last one's is still running, or
// the dispatch has ended).
function took(e: DispatchEvent, next: DispatchEvent | undefined) {
  if (!next) return <span class="note">—</span>
  const ms = Date.parse(next.at) - Date.parse(e.at)
  return Number.isFinite(ms) && ms >= 0 ? duration(ms) : <span class="note">—</span>
}

function Detail({ e }: { e: DispatchEvent }) {
  const d = e.detail
  if (d === undefined || d === null) return null
  if (typeof d !== 'object' || Array.isArray(d)) return <code>{JSON.stringify(d)}</code>
  const fields = Object.fromEntries(
    Object.entries(d as Record<string, unknown>).map(([key, v]) => [
      key,
      typeof v === 'string' ? line(v) : v,
    ]),
  )
  // a cancel's detail repeats the event's instant
  return <Fields value={fields} skip={e.step === 'cancelled' ? ['at'] : []} />
}

function line(text: string): string {
  const last =
    text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .at(-1) ?? ''
  return last.length > LINE_CHARS ? `${last.slice(0, LINE_CHARS - 1)}…` : last
}
