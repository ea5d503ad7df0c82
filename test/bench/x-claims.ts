// temporary: profile claims
import postgres from 'postgres'
import { caller, definition } from './coordinator-cycles.js'
import { spawnCoordinator } from './coordinator-server.js'
const tokens = { orchestrator: 'o'.repeat(40), worker: 'w'.repeat(40), operator: 'p'.repeat(40), admin: 'a'.repeat(40) } as const
const server = 'postgres://postgres@127.0.0.1:5432/postgres'
const database = `preflight_bench_x${Math.random().toString(16).slice(2, 8)}`
const admin = postgres(server, { max: 1, onnotice: () => {} })
await admin.unsafe(`create database ${database}`)
const url = new URL(server); url.pathname = `/${database}`
const s = await spawnCoordinator(url.toString(), Object.entries(tokens).map(([a, b]) => `${a}:${b}`).join(','), process.env.X_BIN)
const call = caller(s.url, tokens)
await call('orchestrator', 'POST', '/v1/subagents', definition)
const N = Number(process.env.X_N ?? 3000)
for (let r = 0; r < 3; r++) {
  for (let i = 0; i < 200; i++) await call('orchestrator', 'POST', '/v1/dispatches', { subagent: definition.name, workspace: { repo: 'bench' } })
  for (let i = 0; i < 200; i++) await call('worker', 'POST', '/v1/worker/claim', { workerId: 'x', waitMs: Number(process.env.X_WAIT ?? 0) })
}
const t = performance.now()
for (let i = 0; i < N; i++) {
  await call('orchestrator', 'POST', '/v1/dispatches', { subagent: definition.name, workspace: { repo: 'bench' } })
  await call('worker', 'POST', '/v1/worker/claim', { workerId: 'x', waitMs: Number(process.env.X_WAIT ?? 0) })
}
console.log('done', ((performance.now() - t) / N).toFixed(2), 'ms per create+claim')
await s.stop()
await admin.unsafe(`drop database ${database} with (force)`); await admin.end()
