// Summarises a V8 .cpuprofile (node --cpu-prof; the coordinator bench writes one with
// BENCH_CPU_PROF=<dir>): the top functions by self time, and self time by package.
// Usage: node --import tsx test/bench/profile-summary.ts <file.cpuprofile> [top=25] [function]
// With a function name: where its self time comes from (the 8 nearest callers of each call path).
// The profiler samples wall time: a thread preempted inside a syscall (a socket write that wakes
// PostgreSQL on a busy 2-core machine) is charged to that syscall, so read /proc CPU figures too.
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

function selfTimes(profile: Profile): Map<number, number> {
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  })
  return self
}

// node_modules/<pkg> (or @scope/pkg), node: internals, the project's own files, or the VM itself.
function packageOf(url: string): string {
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (mod?.[1]) return mod[1]
  if (url.startsWith('node:')) return 'node (internals)'
  if (url === '') return '(vm: gc, idle, native)'
  return 'preflight'
}

function shortUrl(url: string): string {
  return url.replace(/^file:\/\/.*?\/(node_modules|dist|src)\//, '$1/')
}

function addTo(map: Map<string, number>, key: string, ms: number) {
  map.set(key, (map.get(key) ?? 0) + ms)
}

function print(title: string, totals: Map<string, number>, all: number, top: number) {
  console.log(`\n${title}`)
  for (const [key, ms] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / all).toFixed(1).padStart(5)}%  ${key}`)
  }
}

function callers(profile: Profile, self: Map<number, number>, name: string, top: number) {
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const paths = new Map<string, number>()
  let all = 0
  for (const node of profile.nodes) {
    if (node.callFrame.functionName !== name) continue
    const chain: string[] = []
    for (let id = parent.get(node.id); id !== undefined && chain.length < 8; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame
      if (frame)
        chain.push(`${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`)
    }
    const ms = self.get(node.id) ?? 0
    all += ms
    addTo(paths, `\n    < ${chain.join('\n    < ')}`, ms)
  }
  print(`callers of ${name}`, paths, all, top)
}

function main() {
  const [file, topArg, focus] = process.argv.slice(2)
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]')
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const top = Number(topArg ?? 25)
  const self = selfTimes(profile)
  if (focus) return callers(profile, self, focus, top)
  const byFunction = new Map<string, number>()
  const byPackage = new Map<string, number>()
  let all = 0
  let idle = 0
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0
    const { functionName, url, lineNumber } = node.callFrame
    if (functionName === '(idle)') {
      idle += ms
      continue
    }
    all += ms
    addTo(byFunction, `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`, ms)
    addTo(byPackage, packageOf(url), ms)
  }
  console.log(`busy ${all.toFixed(0)} ms, idle ${idle.toFixed(0)} ms`)
  print('self time by package', byPackage, all, top)
  print('self time by function', byFunction, all, top)
}

main()
