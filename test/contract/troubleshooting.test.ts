// docs/troubleshooting.md and `preflight explain` say the same: each row of the doc's tables is an entry
// of src/contract/troubleshooting.ts, word for word, and every code of the contract has one.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DISPATCH_STATUSES, REASON_CODES } from '../../src/contract/index.js'
import { type Seen, TROUBLESHOOTING } from '../../src/contract/troubleshooting.js'

const DOC = readFileSync(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8')

// The section a table is under says where its codes are seen.
const SECTIONS: [RegExp, Seen][] = [
  [/^## unmet\b/, 'unmet'],
  [/^## error\b/, 'error'],
  [/^## setup_failed\b/, 'setup_failed'],
  [/^## expired\b/, 'expired'],
  [/^## failed\b/, 'failed'],
  [/^## Other dispatch statuses/, 'status'],
]

interface Row {
  code: string
  seen: Seen
  cells: Record<string, string>
}

// Every row of every table in a known section, its cells by the header's names.
function rows(markdown: string): Row[] {
  const found: Row[] = []
  let seen: Seen | undefined
  let header: string[] | undefined
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) {
      seen = SECTIONS.find(([title]) => title.test(line))?.[1]
      header = undefined
    } else if (seen && line.startsWith('|')) {
      const cells = line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim())
      if (!header) header = cells
      else if (!/^[-: ]+$/.test(cells.join(''))) {
        const named = Object.fromEntries(header.map((name, i) => [name, cells[i] ?? '']))
        found.push({ code: (cells[0] ?? '').replaceAll('`', ''), seen, cells: named })
      }
    }
  }
  return found
}

describe('the troubleshooting entries', () => {
  const doc = rows(DOC)

  it('reads the doc’s tables', () => {
    expect(doc.length).toBeGreaterThan(20)
  })

  it('have a row in docs/troubleshooting.md each, and the doc no row without one', () => {
    expect(doc.map((r) => r.code).sort()).toEqual(Object.keys(TROUBLESHOOTING).sort())
  })

  it.each(doc.map((r) => [r.code, r] as const))('say of %s what the doc says', (code, row) => {
    const entry = TROUBLESHOOTING[code]
    expect(entry?.seen).toBe(row.seen)
    expect(entry?.means).toBe(row.cells['what it means'] ?? row.cells.meaning)
    expect(entry?.lookAt).toBe(row.cells['what to look at'] ?? '')
    if ('kind' in row.cells) expect(entry?.kind).toBe(row.cells.kind)
  })

  it('explain every reason code of the contract, and the final statuses that carry none', () => {
    const codes = [
      ...REASON_CODES,
      ...DISPATCH_STATUSES.filter((s) => ['expired', 'failed', 'cancelled'].includes(s)),
    ]
    expect(codes.filter((code) => !TROUBLESHOOTING[code])).toEqual([])
  })
})
