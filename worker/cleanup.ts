// The cleanup step, when a dispatch closes: no process of the slot uid left, the uid's entries in the
// world-writable directories removed, then what the steps registered (the workspace, HOME, TMPDIR).
import { type AgentIdentity, slotIdentities, swept } from './identity.js'
import type { DispatchDeps } from './job.js'
import { removeLeftovers } from './leftovers.js'
import type { WorkerLog } from './log.js'

export interface Cleanup {
  log: WorkerLog
  deps: Pick<DispatchDeps, 'config' | 'retire'>
  identity?: AgentIdentity
  // in the order they run: the reverse of the order the steps registered them
  releases: (() => Promise<void> | void)[]
}

// Nothing of the dispatch outlives it: no process of the slot uid writes while its files go. When some
// cannot be stopped, the worker touches none of its files and the slot claims no more. The removals walk
// without following links all the same: another slot's uid may still be writing in a directory this
// agent opened to it. Each failure is logged and the others still run; with an identity, any failure
// retires the slot (its next agent, of the same uid, would find what was left).
export async function cleanUp({ log, deps, identity, releases }: Cleanup): Promise<void> {
  const kept = (why: string) => {
    log.warn('kept its files', { why })
    deps.retire?.(why)
  }
  if (identity && !(await swept(identity, kept))) return
  const left: string[] = []
  const attempt = async (release: () => Promise<void> | void) => {
    try {
      await release()
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err)
      log.warn('cleanup failed', { why })
      left.push(why)
    }
  }
  if (identity) {
    const slots = slotIdentities(deps.config.agentUid ?? identity.uid, deps.config.concurrency)
    await attempt(() => removeLeftovers(identity, slots))
  }
  for (const release of releases) await attempt(release)
  if (identity && left.length > 0) deps.retire?.(`the dispatch left what could not be removed: ${left[0]}`)
}
