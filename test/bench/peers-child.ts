// One peer queue in its own process, driven by test/bench/peers.ts over IPC: it makes its schema and says
// `ready`; `run` for N ms — WORKERS closed loops, each create → claim → complete one job at a time, as preflight's
// HTTP workers do — answering how many cycles completed; `stop` closes its connections and exits.
// argv: the peer's name, the directory it was installed in, the database URL.
import { createRequire } from 'node:module'
import { join } from 'node:path'

const WORKERS = 4

interface Peer {
  // one cycle of one loop
  cycle(): Promise<void>
  stop(): Promise<void>
}

const [name = '', dir = '', url = ''] = process.argv.slice(2)
const load = createRequire(join(dir, 'package.json'))

// graphile-worker: addJob, its runner claims the job (woken by its NOTIFY) and completes it.
async function graphileWorker(): Promise<Peer> {
  const { run, makeWorkerUtils } = load('graphile-worker')
  const utils = await makeWorkerUtils({ connectionString: url })
  await utils.migrate()
  const waiting = new Map<string, () => void>()
  const runner = await run({
    connectionString: url,
    concurrency: WORKERS,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: { bench: async () => {} },
    logger: quietLogger(load),
  })
  // a job may complete before addJob's answer arrives: its id is kept until asked for
  const done = new Set<string>()
  runner.events.on('job:complete', ({ job }: { job: { id: string } }) => {
    const id = String(job.id)
    const resolve = waiting.get(id)
    if (resolve) {
      waiting.delete(id)
      resolve()
    } else done.add(id)
  })
  return {
    async cycle() {
      const id = String((await utils.addJob('bench', {})).id)
      if (done.delete(id)) return
      await new Promise<void>((resolve) => waiting.set(id, resolve))
    },
    async stop() {
      await runner.stop()
      await utils.release()
    },
  }
}

function quietLogger(require: NodeJS.Require) {
  const { Logger } = require('@graphile/logger')
  return new Logger(() => () => {})
}

// pg-boss: send, fetch, complete.
async function pgBoss(): Promise<Peer> {
  const PgBoss = load('pg-boss')
  const boss = new PgBoss({ connectionString: url, max: WORKERS + 2, supervise: false, schedule: false })
  boss.on('error', (err: Error) => console.error(`pg-boss: ${err.message}`))
  await boss.start()
  await boss.createQueue('bench')
  return {
    async cycle() {
      await boss.send('bench', {})
      const [job] = await boss.fetch('bench')
      if (job) await boss.complete('bench', job.id)
    },
    stop: () => boss.stop({ graceful: false, wait: true }),
  }
}

const peers: Record<string, () => Promise<Peer>> = { 'graphile-worker': graphileWorker, 'pg-boss': pgBoss }

async function runFor(peer: Peer, ms: number): Promise<number> {
  const until = performance.now() + ms
  const counts = await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      let n = 0
      while (performance.now() < until) {
        await peer.cycle()
        n++
      }
      return n
    }),
  )
  return counts.reduce((a, b) => a + b, 0)
}

const make = peers[name]
if (!make) throw new Error(`no peer named ${name}: ${Object.keys(peers).join(', ')}`)
const peer = await make()
process.on('message', async (msg: { cmd: 'run'; ms: number } | { cmd: 'stop' }) => {
  if (msg.cmd === 'run') process.send?.({ units: await runFor(peer, msg.ms) })
  else {
    await peer.stop()
    process.disconnect()
  }
})
process.send?.({ ready: true })
