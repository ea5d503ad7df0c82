// How `npm run demo` shows a preflight report to an operator: unmet and error results first, with why.
export interface Report {
  dispatchId: string
  subagent: string
  subagentVersion: number
  workerId: string
  attempt: number
  outcome: string
  results: {
    kind: string
    requirement: string
    status: string
    reason?: string
    observed: Record<string, unknown>
  }[]
  createdAt: string
}

export function printReport(r: Report): void {
  console.log(
    `\npreflight report — ${r.subagent} v${r.subagentVersion}, dispatch ${r.dispatchId}, attempt ${r.attempt}`,
  )
  console.log(`worker ${r.workerId}, ${r.createdAt}: outcome ${r.outcome.toUpperCase()}\n`)
  const order = (s: string) => (s === 'met' ? 1 : 0)
  for (const res of [...r.results].sort((a, b) => order(a.status) - order(b.status))) {
    const head = `  ${res.status.padEnd(5)} ${res.kind.padEnd(5)} ${res.requirement}`
    console.log(res.status === 'met' ? head : `${head}  (${res.reason})`)
    if (res.status !== 'met') for (const line of explain(res.observed)) console.log(`          ${line}`)
  }
}

function explain(observed: Record<string, unknown>): string[] {
  const lines: string[] = []
  if (Array.isArray(observed.searched)) lines.push(`searched PATH: ${observed.searched.join(':')}`)
  if (Array.isArray(observed.rejected) && observed.rejected.length > 0) {
    lines.push(`rejected: ${observed.rejected.map((x) => `${x.path} (${x.why})`).join(', ')}`)
  }
  if (lines.length === 0) lines.push(`observed: ${JSON.stringify(observed)}`)
  return lines
}
