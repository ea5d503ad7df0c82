// A postgres.js pool behind a circuit: every statement and transaction begun on the pool asks the
// circuit first (statements inside a transaction hold its connection and do not).
import type postgres from 'postgres'
import type { Admitted, Circuit } from './circuit.js'
import { CircuitOpenError } from './unreachable.js'

// What the gate uses of a postgres.js (3.4.9) statement: a Query is a Promise that hands itself to
// `handler` (the pool's) when it is first awaited, and has a `state` once it is on a connection.
interface Statement extends Promise<unknown> {
  handler: Handler
  state: unknown
  strings: string[]
  args: unknown[]
  options: Record<string, unknown>
  reject(err: unknown): void
}
type Handler = ((statement: Statement) => void) & { debug?: unknown }

export function gatePool(pool: postgres.Sql, circuit: Circuit): postgres.Sql {
  return new Proxy(pool, {
    // sql`…`: a statement, or a fragment (an identifier, a helper) that is not one
    apply: (target, self, args) => gateStatement(Reflect.apply(target, self, args), circuit),
    get(target, key) {
      if (key === 'unsafe')
        return (...args: Parameters<postgres.Sql['unsafe']>) => gateStatement(target.unsafe(...args), circuit)
      if (key === 'begin') return (...args: unknown[]) => gateBegin(target, circuit, args)
      return Reflect.get(target, key)
    },
  })
}

// The statement asks the circuit when it is handed to the pool (postgres.js does so when it is first
// awaited): refused, it fails unsent; let through, the circuit hears how it ended.
function gateStatement<T>(made: T, circuit: Circuit): T {
  if (!(made instanceof Promise)) return made
  const statement = made as unknown as Statement
  const toPool = statement.handler
  const handler: Handler = (s) => {
    const admitted: Admitted = {
      abandon(err) {
        if (s.state) return
        neutralise(s)
        s.reject(err)
      },
    }
    const refused = circuit.admit(admitted)
    if (refused) return s.reject(refused)
    // Promise's own then: the Query's would hand it to the pool (a no-op once handed, but not ours to do)
    Promise.prototype.then.call(
      s,
      () => circuit.settled(admitted),
      (err: unknown) => circuit.settled(admitted, err),
    )
    toPool(s)
  }
  handler.debug = toPool.debug
  statement.handler = handler
  return made
}

// A statement abandoned while it waits for a connection was answered 503: it must not run if a
// connection opens later. postgres.js cannot take it back safely (cancel() of the statement a
// connecting connection holds leaves that connection stuck in "connecting"), so it runs `select 1` instead.
function neutralise(s: Statement) {
  s.strings = ['select 1']
  s.args = []
  s.options = { simple: true, prepare: false }
}

type TransactionBody = (tx: postgres.TransactionSql) => unknown

// A transaction asks the circuit before it begins. Abandoned while its BEGIN waits for a connection, it
// fails at once; should the BEGIN run later, the body is not run and the transaction is rolled back.
function gateBegin(pool: postgres.Sql, circuit: Circuit, args: unknown[]): Promise<unknown> {
  const [options, body] = (args.length === 1 ? ['', args[0]] : args) as [string, TransactionBody]
  return new Promise((resolve, reject) => {
    let state: 'waiting' | 'running' | 'abandoned' = 'waiting'
    const admitted: Admitted = {
      abandon(err) {
        if (state !== 'waiting') return
        state = 'abandoned'
        reject(err)
      },
    }
    const refused = circuit.admit(admitted)
    if (refused) return reject(refused)
    pool
      .begin(options, (tx) => {
        if (state === 'abandoned') throw new CircuitOpenError()
        state = 'running'
        return body(tx)
      })
      .then(
        (value) => {
          circuit.settled(admitted)
          resolve(value)
        },
        (err: unknown) => {
          // abandoned: its client was answered; what became of it later says nothing of the database now
          if (state === 'abandoned') return
          circuit.settled(admitted, err)
          reject(err)
        },
      )
  })
}
