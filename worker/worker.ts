// The worker process: long-polls for dispatches, runs up to `concurrency` at once, shuts down gracefully.
import { type Api, backoffMs, RefusedError, sleep } from './api.js'
import { readClaim } from './claim.js'
import type { WorkerConfig } from './config.js'
import { cpuSeconds } from './cpu.js'
import { type AgentIdentity, slotIdentities, slotIdentity, swept } from './identity.js'
import type { DispatchDeps, Ending, NextClaim } from './job.js'
import { removeLeftovers, removeStaleDispatches, sharedDirs } from './leftovers.js'
import { runDispatch } from './lifecycle.js'
import type { WorkerLog } from './log.js'
import type { WorkerMetrics } from './metrics.js'

export interface RunningWorker {
  // stop claiming, wait up to graceMs for running dispatches, then stop their agents
  stop(): Promise<void>
  // stop running dispatches' agents at once (a second signal)
  abort(): void
  // resolves when every slot has ended
  done: Promise<void>
  // dispatches ended so far, by how they ended
  counts: Record<Ending, number>
  // why the worker stopped by itself (the coordinator refused its token)
  fatal?: Error
}

export function startWorker(
  opts: WorkerConfig,
  deps: { api: Api; log: WorkerLog; env: NodeJS.ProcessEnv; metrics?: WorkerMetrics },
) {
  const stopping = new AbortController()
  const giveUp = new AbortController()
  const counts: Record<Ending, number> = {
    succeeded: 0,
    failed: 0,
    setup_failed: 0,
    preflight_failed: 0,
    cancelled: 0,
    abandoned: 0,
  }
  const dispatchDeps: DispatchDeps = { ...deps, config: opts, signal: giveUp.signal }
  const slots = opts.agentUid === undefined ? [] : slotIdentities(opts.agentUid, opts.concurrency)
  // a worker that died may have left its dispatches' directories: removed before any slot claims (an
  // error is kept for the slots to stop on, not thrown where nothing waits for it yet)
  const stale =
    opts.agentUid === undefined
      ? Promise.resolve(undefined)
      : removeStaleDispatches(opts.workdir, opts.keepFailed).then(
          () => undefined,
          (err: Error) => err,
        )
  // the slots' uids may leave entries in any world-writable directory: found now, swept after each dispatch
  if (opts.agentUid !== undefined)
    void sharedDirs().then((dirs) =>
      deps.log.info('found the world-writable directories, swept after each dispatch', {
        count: dirs.length,
      }),
    )
  const metrics = deps.metrics
  // claims made or under way: a slot takes its place before it asks, so slots together never exceed the limit
  let taken = 0
  // false once the coordinator refused `next` (a version before it): no slot asks again
  let coordinatorTakesNext = true

  async function slot(n: number): Promise<void> {
    let failures = 0
    const identity = opts.agentUid === undefined ? undefined : slotIdentity(opts.agentUid, n - 1)
    const log = dispatchDeps.log.child({ slot: n })
    let retired: string | undefined
    let startedClean = false
    const retire = (why: string) => {
      retired ??= why
    }
    // The claim the last completion was answered with (`next`), and whether the slot asked for one:
    // a place among the claims is taken when it asks, given back when none came.
    let handed: unknown
    let asked = false
    const next: NextClaim = {
      ask() {
        if (!coordinatorTakesNext || stopping.signal.aborted || !mayTake()) return undefined
        taken++
        asked = true
        return { workerId: opts.workerId, ...(opts.labels?.length ? { labels: [...opts.labels] } : {}) }
      },
      handed: (claim) => {
        handed = claim
      },
      refused: () => {
        coordinatorTakesNext = false
      },
    }
    // With an identity the slot's uid is swept between a dispatch's end and the next claim: no `next`.
    const deps = { ...dispatchDeps, log, ...(identity ? { identity, retire } : { next }) }
    const stopped = (why: string) => {
      log.error('slot out of service, claims no more', { why })
      metrics?.outOfService()
    }
    while (!stopping.signal.aborted) {
      if (retired) return stopped(retired)
      const got = handed
      handed = undefined
      if (asked && got === undefined) taken--
      asked = false
      if (got === undefined && !mayTake()) return
      // Before the slot's first claim, nothing of its uid is left by a worker that died: no process (none
      // can change the next dispatch's workspace), no entry in a shared directory, no IPC object, none of
      // its dispatches' directories in the workdir. After that each dispatch's end sees to it, and a slot
      // where that fails is retired: nothing runs as the uid between a dispatch's end and the next claim.
      if (identity && !startedClean && !(await startClean(identity, stopped))) return
      startedClean = true
      let answer = got
      if (answer === undefined) {
        taken++
        try {
          answer = await deps.api.claim(opts.workerId, opts.waitMs, stopping.signal, opts.labels)
          failures = 0
        } catch (err) {
          taken--
          if (isRefused(err)) return refuse(err)
          await backOff(err, ++failures)
          continue
        }
      }
      if (answer === undefined) {
        taken--
        continue
      }
      const read = readClaim(answer)
      if (!read) {
        // nothing fences a write: the lease lapses and the coordinator gives the dispatch another attempt
        log.warn('a claim without a readable dispatch id, attempt and lease: left to lapse')
        counts.abandoned++
        metrics?.ended('abandoned')
        continue
      }
      const { id, attempt } = read.claim.dispatch
      const about = { dispatchId: id, attempt }
      log.info('claimed dispatch', {
        ...about,
        step: 'claim',
        ...(got === undefined ? {} : { with: 'completion' }),
      })
      if (!read.ok)
        log.warn('the claim does not read', { ...about, step: 'claim', problem: read.claim.problem })
      metrics?.busy(1)
      const ending = await runDispatch(read, deps).finally(() => metrics?.busy(-1))
      counts[ending]++
      metrics?.ended(ending)
      log.info('dispatch ended', { ...about, step: 'end', ending })
    }
    // stopping: a dispatch claimed with the last completion is not started; its lease lapses and it is
    // queued again for another attempt
    if (handed !== undefined)
      log.info('stopping: the dispatch claimed with the last completion is left to lapse')
  }

  const mayTake = () => opts.maxDispatches === undefined || taken < opts.maxDispatches

  async function startClean(identity: AgentIdentity, stopped: (why: string) => void): Promise<boolean> {
    if (!(await sweepBefore(identity, stopped))) return false
    try {
      const failed = await stale
      if (failed) throw failed
      await removeLeftovers(identity, slots)
      return true
    } catch (err) {
      stopped(`what a worker before this one left could not be removed: ${(err as Error).message}`)
      return false
    }
  }

  // swept(), its time and CPU counted as the step `sweep`
  async function sweepBefore(identity: AgentIdentity, stopped: (why: string) => void): Promise<boolean> {
    const at = performance.now()
    const cpu = cpuSeconds()
    const ok = await swept(identity, stopped)
    metrics?.stepTook('sweep', (performance.now() - at) / 1000, cpuSeconds() - cpu)
    return ok
  }

  // A token the coordinator refuses will not start working by retrying: stop the worker.
  function refuse(err: RefusedError) {
    worker.fatal ??= err
    stopping.abort()
  }

  async function backOff(err: unknown, failures: number): Promise<void> {
    if (stopping.signal.aborted) return
    deps.log.warn('claim failed', { failures, why: err instanceof Error ? err.message : String(err) })
    await sleep(backoffMs(failures + 1, opts.claimBackoffMs.base, opts.claimBackoffMs.max), stopping.signal)
  }

  const done = Promise.all(Array.from({ length: opts.concurrency }, (_, i) => slot(i + 1))).then(() => {})
  const worker: RunningWorker = {
    counts,
    done,
    abort: () => giveUp.abort(),
    async stop() {
      if (!stopping.signal.aborted) deps.log.info('stopping: no new claims', { graceMs: opts.graceMs })
      stopping.abort()
      const grace = new AbortController()
      await Promise.race([done, sleep(opts.graceMs, grace.signal)])
      grace.abort()
      giveUp.abort()
      await done
    },
  }
  return worker
}

function isRefused(err: unknown): err is RefusedError {
  return err instanceof RefusedError && (err.status === 401 || err.status === 403)
}
