// Waiting on an observable condition instead of a fixed sleep: polls until `check` holds, and fails
// with `what` once the deadline passes — no polling loop in the tests runs unbounded.
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  { timeoutMs = 5_000, everyMs = 10, what = 'the condition' } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
