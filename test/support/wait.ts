// Waiting on an observable condition instead of a fixed sleep: polls until `check` holds, and fails
// with `what` once the deadline passes — no polling loop in the tests runs unbounded. A check that
// throws has not held yet (a coordinator restarting, a file not written yet); the last error is in the
// message if the time runs out. The one wait of the suite: unit tests, end-to-end, soak and containers.
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  {
    timeoutMs = 5_000,
    everyMs = 10,
    what = 'the condition',
  }: { timeoutMs?: number; everyMs?: number; what?: string | (() => string) } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let failed: unknown
  for (;;) {
    try {
      if (await check()) return
    } catch (err) {
      failed = err
    }
    if (Date.now() > deadline) {
      const about = typeof what === 'function' ? what() : what
      const last = failed === undefined ? '' : ` (the check last threw: ${String(failed)})`
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${about}${last}`)
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
