// The observation a completion carries, held to what the coordinator takes: its bytes as JSON.
import { describe, expect, it } from 'vitest'
import { CompleteRequest, type Observed, type Undeclared } from '../../../src/contract/index.js'
import { withinBudget } from '../../../worker/observe/observation.js'

describe('withinBudget', () => {
  it('drops entries from the end until the JSON fits, and says it cut the record', () => {
    // names of control characters: six bytes each once escaped, the contract's bounds all kept
    const name = (i: number) => `${'\u0001'.repeat(250)}${i}`
    const observed: Observed = {
      source: 'trace',
      exec: Array.from({ length: 200 }, (_, i) => ({ name: name(i) })),
      paths: [],
    }
    const undeclared: Undeclared[] = observed.exec.map((n) => ({
      kind: 'exec',
      name: n.name,
      state: 'missing',
    }))
    const kept = withinBudget(observed, undeclared)
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(256 * 1024)
    expect(kept.observed.cut).toBe(true)
    expect(kept.undeclared.map((n) => ('name' in n ? n.name : ''))).toEqual(
      kept.observed.exec.map((n) => n.name),
    )
    const body = { attempt: 1, leaseToken: 'x'.repeat(32), exitCode: 1, ...kept }
    expect(CompleteRequest.safeParse(body).success).toBe(true)
  })
})
