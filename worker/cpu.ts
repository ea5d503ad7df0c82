// CPU time this process and the children it has waited for used so far (user + system), for the step
// metrics: process.cpuUsage() for its own, /proc/self/stat's cutime and cstime for its children (git,
// setup, the agent, the sweep's helper and what they waited for in turn). Linux; elsewhere its own alone.
import { readFileSync } from 'node:fs'

const TICK_S = 0.01 // USER_HZ is 100 on Linux

export function cpuSeconds(): number {
  const own = process.cpuUsage()
  return (own.user + own.system) / 1e6 + childrenSeconds()
}

function childrenSeconds(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    // the fields after the command name in parentheses; cutime and cstime are fields 16 and 17
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[13]) + Number(fields[14])) * TICK_S
  } catch {
    return 0
  }
}
