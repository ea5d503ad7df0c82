// What an orchestrator's session may do to one dispatch (ui/routes.tsx shows it to no one else): cancel
// it while it runs, retry it once it has ended. Plain forms posted to the page's own routes, which
// answer as the API's cancel and retry do.
import { type DispatchView, isFinal } from '../../contract/index.js'

// `retryKey`: the retry form's idempotency key, new with each page, so a form sent twice (a double
// click, a reload of its answer) queues one dispatch.
export function Actions({ d, retryKey }: { d: DispatchView; retryKey: string }) {
  return (
    <section aria-labelledby="actions">
      <h2 id="actions">Actions</h2>
      {isFinal(d.status) ? (
        <form class="action" method="post" action={`/ui/dispatches/${d.id}/retry`}>
          <input type="hidden" name="idempotencyKey" value={retryKey} />
          <button type="submit">Retry</button>
          <p class="note">
            Queues a new dispatch of {d.subagent.name} version {d.subagent.version} (not its latest) on the
            same workspace, with the same labels, priority and metadata
            {d.deadline ? ", and a deadline as far from now as this one's was from its creation" : ''}. This
            one stays as it is.
          </p>
        </form>
      ) : (
        <form class="action" method="post" action={`/ui/dispatches/${d.id}/cancel`}>
          <label>
            Why (optional)
            <input name="reason" maxlength={1024} />
          </label>
          <button type="submit">Cancel dispatch</button>
          <p class="note">
            Its status is cancelled at once; a worker running it stops setup or the agent within about two
            seconds and keeps what it had.
          </p>
        </form>
      )}
    </section>
  )
}
