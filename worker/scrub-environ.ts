// Takes a secret out of the kernel's copy of this process's environment: /proc/<pid>/environ.
//
// `delete process.env.X` removes X from libc's list of variables, not from the strings the process was
// started with, which the kernel shows in /proc/<pid>/environ for as long as the process lives. Those
// strings lie between env_start and env_end of /proc/self/stat (proc(5)), and a process may write its
// own memory through /proc/self/mem, as root and as any other uid: the value's bytes are overwritten
// with NULs there, in place (libc's pointers to the other variables point into the same area).
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import { procStat } from './proc-stat.js'

export type ScrubResult = { scrubbed: true } | { scrubbed: false; why: string }

// Empties every `name=…` the process was started with; scrubbed only when /proc/self/environ then shows
// `value` nowhere (another variable may hold it too: that one is the process's, and left as it is).
export function scrubFromEnviron(name: string, value: string): ScrubResult {
  let holders: string[]
  try {
    const area = environArea()
    if (typeof area === 'string') return { scrubbed: false, why: area }
    overwriteValues(area, name)
    holders = value === '' ? [] : holdersOf(value)
  } catch (err) {
    return { scrubbed: false, why: (err as Error).message }
  }
  return holders.length === 0
    ? { scrubbed: true }
    : { scrubbed: false, why: `/proc/self/environ still shows it, in ${holders.join(', ')}` }
}

function overwriteValues(area: { start: number; end: number }, name: string): void {
  const fd = openSync('/proc/self/mem', 'r+')
  try {
    const bytes = Buffer.alloc(area.end - area.start)
    const read = readSync(fd, bytes, 0, bytes.length, area.start)
    for (const [from, to] of valuesOf(bytes.subarray(0, read), name)) {
      writeSync(fd, Buffer.alloc(to - from), 0, to - from, area.start + from)
    }
  } finally {
    closeSync(fd)
  }
}

// Where the environment strings are, or why that cannot be known.
function environArea(): { start: number; end: number } | string {
  // env_start and env_end
  const [start = 0, end = 0] = procStat([50, 51])
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start <= 0 || end <= start) {
    return '/proc/self/stat shows no env_start and env_end'
  }
  return { start, end }
}

// The [from, to) offsets of the value of each `name=` entry: at the area's start or after a NUL.
function valuesOf(bytes: Buffer, name: string): [number, number][] {
  const prefix = Buffer.from(`${name}=`)
  const found: [number, number][] = []
  for (let at = bytes.indexOf(prefix); at !== -1; at = bytes.indexOf(prefix, at + 1)) {
    if (at > 0 && bytes[at - 1] !== 0) continue
    const from = at + prefix.length
    const nul = bytes.indexOf(0, from)
    const to = nul === -1 ? bytes.length : nul
    if (to > from) found.push([from, to])
  }
  return found
}

// The names of the variables /proc/self/environ shows holding `value`.
function holdersOf(value: string): string[] {
  return readFileSync('/proc/self/environ', 'utf8')
    .split('\0')
    .filter((entry) => entry.includes(value))
    .map((entry) => entry.split('=')[0] ?? entry)
}
