// The faults of the soak test, one after another while dispatches flow: a worker SIGKILLed (and started
// again), a worker SIGSTOPped past its lease (then let go on), a coordinator restarted, the database cut
// off behind the proxy. Each is recorded with what the checks and the figures need.

import { setTimeout as sleep } from 'node:timers/promises'
import type { Coordinator, Proc } from './e2e.js'
import type { TcpProxy } from './tcp-proxy.js'

export interface Fault {
  kind: 'sigkill' | 'sigstop' | 'coordinator-restart' | 'database'
  worker?: string
  at: number
  // how long the fault lasted
  ms: number
  // for the database: from the proxy forwarding again to both coordinators' /readyz answering 200
  recoveredMs?: number
}

export interface Stage {
  leaseMs: number
  workers: Map<string, Proc>
  respawn(id: string): Proc
  proxy: TcpProxy
  coordinators: Coordinator[]
  restart(c: Coordinator): Promise<Coordinator>
}

async function ready(url: string): Promise<boolean> {
  const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined)
  return res?.status === 200
}

// One fault at a time: the next waits a lease's length, so heartbeats held up by this one (a worker
// whose coordinator restarted) have landed before the next fault (the database away) could add to it.
// Only a worker's own fault may then take its leases.
const settle = (stage: Stage) => sleep(stage.leaseMs)

export async function chaos(stage: Stage): Promise<Fault[]> {
  const faults: Fault[] = []
  const at = Date.now()

  // a worker dies mid-work; its dispatches come back when their leases expire
  await stage.workers.get('w1')?.stop('SIGKILL')
  faults.push({ kind: 'sigkill', worker: 'w1', at, ms: 1_000 })
  await sleep(1_000)
  stage.respawn('w1')

  // a worker freezes past its lease, then wakes up holding leases that are no longer its own
  const frozen = stage.workers.get('w2')?.child
  const stopMs = stage.leaseMs + 3_000
  frozen?.kill('SIGSTOP')
  faults.push({ kind: 'sigstop', worker: 'w2', at: Date.now(), ms: stopMs })
  await sleep(stopMs)
  frozen?.kill('SIGCONT')
  await settle(stage)

  // a coordinator restarts (graceful stop, start on the same port)
  const old = stage.coordinators[1]
  if (old) {
    const restartAt = Date.now()
    stage.coordinators[1] = await stage.restart(old)
    faults.push({ kind: 'coordinator-restart', at: restartAt, ms: Date.now() - restartAt })
    await settle(stage)
  }

  // the database goes away for three seconds, for both coordinators at once
  const outageMs = 3_000
  await stage.proxy.refuse()
  const outageAt = Date.now()
  await sleep(outageMs)
  await stage.proxy.forward()
  const back = Date.now()
  while (!(await Promise.all(stage.coordinators.map((c) => ready(c.url)))).every(Boolean)) {
    if (Date.now() - back > 30_000) break
    await sleep(50)
  }
  faults.push({ kind: 'database', at: outageAt, ms: back - outageAt, recoveredMs: Date.now() - back })
  return faults
}
