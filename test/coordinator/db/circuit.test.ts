// The circuit's decisions, with a probe the test answers: what opens it, what it does while open, and
// what closes it. (On a real pool and database: gate.test.ts and the outage tests.)
import { describe, expect, it, vi } from 'vitest'
import { type Admitted, Circuit } from '../../../src/coordinator/db/circuit.js'

const coded = (code: string) => Object.assign(new Error(`failed: ${code}`), { code })
// as drizzle wraps a driver's error
const wrapped = (cause: unknown) => Object.assign(new Error('Failed query: select 1'), { cause })

// A probe whose every call the test answers; `calls` counts them.
function probes() {
  const pending: { resolve: () => void; reject: (e: unknown) => void }[] = []
  let calls = 0
  return {
    probe: () =>
      new Promise<void>((resolve, reject) => {
        calls++
        pending.push({ resolve, reject })
      }),
    get calls() {
      return calls
    },
    answer: () => pending.shift()?.resolve(),
    refuse: () => pending.shift()?.reject(coded('ECONNREFUSED')),
  }
}

const statement = (): Admitted & { abandoned: Error[] } => {
  const abandoned: Error[] = []
  return { abandoned, abandon: (err) => abandoned.push(err) }
}

// Lets a statement through and ends it with `err`.
function fail(circuit: Circuit, err: unknown) {
  const s = statement()
  expect(circuit.admit(s)).toBeUndefined()
  circuit.settled(s, err)
}

describe('the circuit', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'CONNECTION_CLOSED',
    'CONNECT_TIMEOUT',
    'ENOTFOUND',
    '08006',
    '57P01',
    '57P03',
  ])('opens on a connection refused or lost (%s)', (code) => {
    const circuit = new Circuit(probes().probe)
    try {
      fail(circuit, wrapped(coded(code)))
      expect(circuit.isOpen).toBe(true)
    } finally {
      circuit.stop()
    }
  })

  it.each([
    ['53300', 'too many connections: the pool’s open connections still work'],
    ['57014', 'a statement timeout'],
    ['42P01', 'a statement the database refused'],
    ['CONNECTION_ENDED', 'the pool ended by this process'],
  ])('stays closed on %s (%s)', (code) => {
    const circuit = new Circuit(probes().probe)
    try {
      fail(circuit, wrapped(coded(code)))
      fail(circuit, new TypeError('a bug'))
      expect(circuit.isOpen).toBe(false)
    } finally {
      circuit.stop()
    }
  })

  it('fails what it let through and still waits, as it opens; what ran meanwhile decides for itself', () => {
    const circuit = new Circuit(probes().probe)
    try {
      const waiting = statement()
      const done = statement()
      circuit.admit(waiting)
      circuit.admit(done)
      circuit.settled(done)
      fail(circuit, coded('ECONNREFUSED'))
      expect(waiting.abandoned.map((e) => (e as { code?: string }).code)).toEqual(['CIRCUIT_OPEN'])
      expect(done.abandoned).toEqual([])
    } finally {
      circuit.stop()
    }
  })

  it('refuses every statement while open and sends one probe at a time until one is answered', async () => {
    vi.useFakeTimers()
    const p = probes()
    const circuit = new Circuit(p.probe, 200)
    const changes: boolean[] = []
    circuit.onChange((open) => changes.push(open))
    try {
      fail(circuit, coded('ECONNREFUSED'))
      await vi.advanceTimersByTimeAsync(0)
      expect(p.calls).toBe(1)
      for (let i = 0; i < 100; i++) expect(circuit.admit(statement())).toMatchObject({ code: 'CIRCUIT_OPEN' })
      // a probe unanswered holds back the next one, however long it takes
      await vi.advanceTimersByTimeAsync(5_000)
      expect(p.calls).toBe(1)
      // a refused one is followed by the next after the interval
      p.refuse()
      await vi.advanceTimersByTimeAsync(199)
      expect(p.calls).toBe(1)
      await vi.advanceTimersByTimeAsync(1)
      expect(p.calls).toBe(2)
      expect(circuit.isOpen).toBe(true)
      p.answer()
      await vi.advanceTimersByTimeAsync(0)
      expect(circuit.isOpen).toBe(false)
      expect(circuit.admit(statement())).toBeUndefined()
      expect(changes).toEqual([true, false])
      await vi.advanceTimersByTimeAsync(5_000)
      expect(p.calls).toBe(2)
    } finally {
      circuit.stop()
      vi.useRealTimers()
    }
  })
})
