// The dispatch cycle's statements as SQL text made once, when their module loads, with their parameters
// by name. drizzle builds a statement's text from its fragments on every call: ~30 µs of the
// coordinator's CPU a statement, 5 % of a cycle's (docs/benchmarks.md). These are run by text and an
// array of values, prepared on postgres.js; on PGlite, or in a transaction, through drizzle as before.
import { type SQL, sql } from 'drizzle-orm'
import type postgres from 'postgres'
import { clientOf, type Orm, rows } from './client.js'

// P: its parameters by name; T: a row of its answer, taken on trust as in rows() (client.ts).
export interface Statement<P, T> {
  readonly text: string
  // the parameter of each placeholder: names[n - 1] is `$n`
  readonly names: readonly (keyof P & string)[]
  // never set: it carries the row's type from statement() to run()
  readonly row?: T
}

// `build` gets each parameter's placeholder by name (`${p.id}` is `$1`, the same each time it is used)
// and answers the statement's text.
export function statement<P, T>(
  build: (p: { readonly [K in keyof P]-?: string }) => string,
): Statement<P, T> {
  const names: (keyof P & string)[] = []
  const placeholders = new Proxy({} as { [K in keyof P]-?: string }, {
    get(_, name) {
      if (typeof name !== 'string') throw new TypeError('a parameter is named by a string')
      const at = names.indexOf(name as keyof P & string)
      return `$${at === -1 ? names.push(name as keyof P & string) : at + 1}`
    },
  })
  const text = build(placeholders)
  // asSql() splits the text at each `$n`: there must be none but the placeholders (no `$1` in a literal)
  for (const [, n] of text.matchAll(/\$(\d+)/g))
    if (Number(n) < 1 || Number(n) > names.length) throw new Error(`$${n} is no parameter of: ${text}`)
  return { text, names }
}

const valuesOf = <P>(st: Statement<P, unknown>, params: P) =>
  st.names.map((name) => {
    const value = params[name]
    if (value === undefined) throw new TypeError(`the statement's parameter ${name} is not given`)
    return value
  })

// The text and the values in placeholder order: what run() sends to postgres.js (and EXPLAIN may).
export const bind = <P>(st: Statement<P, unknown>, params: P) => ({
  text: st.text,
  values: valuesOf(st, params),
})

// The statement with its values as drizzle SQL: for PGlite and a transaction. (drizzle numbers each use
// of a value anew: the text differs from the prepared one where a parameter is used twice.)
export function asSql<P>(st: Statement<P, unknown>, params: P): SQL {
  const values = valuesOf(st, params)
  const parts = st.text.split(/\$(\d+)/)
  return sql.join(parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${values[Number(part) - 1]}`)))
}

export async function run<P, T>(db: Orm, st: Statement<P, T>, params: P): Promise<T[]> {
  const client = clientOf(db)
  if (!client) return rows<T>(db, asSql(st, params))
  const values = valuesOf(st, params) as postgres.ParameterOrJSON<never>[]
  return (await client.unsafe(st.text, values, { prepare: true })) as unknown as T[]
}

export async function runOne<P, T>(db: Orm, st: Statement<P, T>, params: P): Promise<T | undefined> {
  return (await run(db, st, params))[0]
}
