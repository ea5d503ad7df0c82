// CPU time (user + system) of the processes a benchmark phase involves, read from /proc: the
// coordinator, the PostgreSQL backends serving the benchmark database, PostgreSQL's shared
// background processes (WAL writer etc.: other users of the server add to those), and this client.
// CPU time, unlike wall time, barely moves when other work shares the machine.
import { readdirSync, readFileSync } from 'node:fs'

export interface CpuSample {
  coordinator: number
  // pid → CPU ms of each backend of the benchmark database (backends may start mid-phase).
  backends: Map<number, number>
  // pid → CPU ms of postgres processes that serve no database (checkpointer, walwriter, …).
  background: Map<number, number>
  client: number
}

export interface CpuSpent {
  coordinator: number
  postgres: number
  background: number
  client: number
}

const TICK_MS = 10 // USER_HZ is 100 on Linux

// utime + stime of a process in ms, or undefined once it is gone.
function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS
  } catch {
    return undefined
  }
}

function postgresProcesses(database: string) {
  const backends = new Map<number, number>()
  const background = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let title: string
    try {
      title = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
    } catch {
      continue
    }
    if (!title.startsWith('postgres: ')) continue
    const ms = processCpuMs(Number(entry))
    if (ms === undefined) continue
    // A backend's title is "postgres: [cluster: ]user database host(port) state".
    if (title.includes(` ${database} `)) backends.set(Number(entry), ms)
    else if (!/\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(title)) background.set(Number(entry), ms)
  }
  return { backends, background }
}

export function sampleCpu(coordinatorPid: number, database: string): CpuSample {
  const usage = process.cpuUsage()
  return {
    coordinator: processCpuMs(coordinatorPid) ?? Number.NaN,
    ...postgresProcesses(database),
    client: (usage.user + usage.system) / 1000,
  }
}

export function cpuSince(before: CpuSample, after: CpuSample): CpuSpent {
  const grown = (a: Map<number, number>, b: Map<number, number>) =>
    [...b].reduce((sum, [pid, ms]) => sum + ms - (a.get(pid) ?? 0), 0)
  return {
    coordinator: after.coordinator - before.coordinator,
    postgres: grown(before.backends, after.backends),
    background: grown(before.background, after.background),
    client: after.client - before.client,
  }
}

export const scaleCpu = (spent: CpuSpent, by: number): CpuSpent => ({
  coordinator: spent.coordinator * by,
  postgres: spent.postgres * by,
  background: spent.background * by,
  client: spent.client * by,
})

const total = (s: CpuSpent) => s.coordinator + s.postgres + s.client

export interface Windows {
  units: number
  rate: number
  // units/s of each window, for the eye
  rates: string
  // CPU per unit of the window with the least CPU per unit in all (the one other work disturbed
  // least: contention makes every unit dearer), and of the median window.
  best: CpuSpent
  median: CpuSpent
}

// Runs `work` (answers how many units it did) `rounds` times, with CPU samples around each run.
export async function measureWindows(
  rounds: number,
  sample: () => CpuSample,
  work: () => Promise<number>,
): Promise<Windows> {
  const windows: { units: number; seconds: number; perUnit: CpuSpent }[] = []
  for (let i = 0; i < rounds; i++) {
    const before = sample()
    const started = performance.now()
    const units = await work()
    const seconds = (performance.now() - started) / 1000
    windows.push({ units, seconds, perUnit: scaleCpu(cpuSince(before, sample()), 1 / Math.max(units, 1)) })
  }
  const units = windows.reduce((n, w) => n + w.units, 0)
  const seconds = windows.reduce((n, w) => n + w.seconds, 0)
  const byCost = windows.map((w) => w.perUnit).sort((a, b) => total(a) - total(b))
  return {
    units,
    rate: units / seconds,
    rates: windows.map((w) => (w.units / w.seconds).toFixed(0)).join(' '),
    best: byCost[0] as CpuSpent,
    median: byCost[Math.floor(byCost.length / 2)] as CpuSpent,
  }
}

// "coordinator 1.23 ms, postgres 0.45 ms, …" per unit of work (a cycle, a request).
export function formatCpu(spent: CpuSpent, units: number): string {
  const per = (ms: number) => `${(ms / units).toFixed(2)} ms`
  return `coordinator ${per(spent.coordinator)}  postgres backends ${per(spent.postgres)}  postgres background (shared) ${per(spent.background)}  client ${per(spent.client)}`
}
