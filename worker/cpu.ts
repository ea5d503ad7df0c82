// CPU time this process and the children it has waited for used so far (user + system), for the step
// metrics: process.cpuUsage() for its own, /proc/self/stat's cutime and cstime for its children (git,
// setup, the agent, the sweep's helper and what they waited for in turn). Linux; elsewhere its own alone.
import { procStat } from './proc-stat.js'

const TICK_S = 0.01 // USER_HZ is 100 on Linux

export function cpuSeconds(): number {
  const own = process.cpuUsage()
  return (own.user + own.system) / 1e6 + childrenSeconds()
}

function childrenSeconds(): number {
  try {
    // cutime and cstime: the CPU of the children it waited for
    const [user = 0, system = 0] = procStat([16, 17])
    return (user + system) * TICK_S
  } catch {
    return 0
  }
}
