// The dispatch listing: newest first, keyset on (created_at, id), by status, subagent, worker, reason
// and a window; and the endings after a cursor, oldest ending first, keyset on (ended_at, id).
import { type SQL, sql } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import {
  DISPATCH_STATUSES,
  type DispatchPage,
  type DispatchStatus,
  type EndingsPage,
  type Metadata,
} from '../../contract/index.js'
import { type Orm, PREPARED, rows } from './client.js'
import { decodeCursor, encodeCursor, isMicroInstant, pageOf } from './cursor.js'
import { type ItemRow, itemColumns, toItem } from './dispatch-items.js'
import { dispatches, dispatchReasons } from './schema.js'
import { instant, jsonb, keysetWindow } from './sql.js'

export interface DispatchFilters {
  status?: DispatchStatus[] | undefined
  subagent?: string | undefined
  worker?: string | undefined
  reason?: string | undefined
}

export interface DispatchPageQuery extends DispatchFilters {
  // metadata.<key>=<value>: every pair must be in the dispatch's metadata
  metadata?: Metadata | undefined
  // hex digits an id starts with (no dashes, lower case)
  idPrefix?: string | undefined
  since?: string | undefined // ISO 8601, inclusive, on created_at
  until?: string | undefined // ISO 8601, exclusive
  limit: number
  cursor?: string | undefined
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const isKey = (v: unknown): v is [string, string] =>
  Array.isArray(v) && v.length === 2 && isMicroInstant(v[0]) && typeof v[1] === 'string' && UUID.test(v[1])

// The tables as the statements name them (FROM dispatches d, FROM dispatch_reasons r): the filters'
// columns.
const d = alias(dispatches, 'd')
const r = alias(dispatchReasons, 'r')

// The subagent and worker filters, on dispatches (d) or on a reason's copy of them (r).
const matching = (f: DispatchFilters, t: typeof d | typeof r = d): SQL[] => [
  ...(f.subagent === undefined ? [] : [sql`${t.subagentName} = ${f.subagent}`]),
  ...(f.worker === undefined ? [] : [sql`${t.workerId} = ${f.worker}`]),
]
// A page's LIMIT as a literal, not a parameter: the statements are prepared, and a generic plan that
// does not know the limit costs the merged walks as if they read every row — past jit_above_cost, where
// compiling the plan took 1.5 s on a page that runs in 1 ms.
function limitOf(n: number): SQL {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`a page of ${n} rows`)
  return sql.raw(`LIMIT ${n}`)
}

const all = (conditions: SQL[]) => (conditions.length === 0 ? sql`true` : sql.join(conditions, sql` AND `))
const statusIn = (statuses: readonly DispatchStatus[], t: typeof d | typeof r = d) =>
  sql`${t.status} IN (${sql.join(
    statuses.map((s) => sql`${s}`),
    sql`, `,
  )})`

// The dispatch (d) ended for this reason.
const endedFor = (reason: string) =>
  sql`EXISTS (SELECT 1 FROM dispatch_reasons r WHERE ${r.dispatchId} = ${d.id} AND ${r.reason} = ${reason})`

// The page's (created_at, id), one more than the limit. Without a reason: one walk per status (all nine
// when none is asked for), each stopping at the page's size, merged — every status, subagent and worker
// filter has an index that starts with it and then status (dispatches_*_recent). With a reason: the
// reason's rows newest first (dispatch_reasons_*: the reason alone, or with the subagent or the worker),
// with the status they copied.
function pageKeys(q: DispatchPageQuery, after: [string, string] | undefined): SQL {
  const n = q.limit + 1
  if (q.metadata !== undefined || q.idPrefix !== undefined) return oneWalk(q, after)
  if (q.reason !== undefined) {
    const conditions = [
      sql`${r.reason} = ${q.reason}`,
      ...keysetWindow(r.createdAt, r.dispatchId, q, after),
      ...(q.status === undefined ? [] : [statusIn(q.status, r)]),
      ...matching(q, r),
    ]
    return sql`SELECT r.created_at, r.dispatch_id AS id FROM dispatch_reasons r
      WHERE ${all(conditions)} ORDER BY r.created_at DESC, r.dispatch_id DESC ${limitOf(n)}`
  }
  const conditions = [...keysetWindow(d.createdAt, d.id, q, after), ...matching(q)]
  const walks = (q.status ?? DISPATCH_STATUSES).map(
    (
      status,
    ) => sql`(SELECT d.created_at, d.id FROM dispatches d WHERE d.status = ${status} AND ${all(conditions)}
      ORDER BY d.created_at DESC, d.id DESC ${limitOf(n)})`,
  )
  return sql`SELECT created_at, id FROM (${sql.join(walks, sql` UNION ALL `)}) walks
    ORDER BY created_at DESC, id DESC ${limitOf(n)}`
}

// With metadata pairs: the dispatches holding them all (dispatches_metadata, GIN on containment), with the
// other filters, newest first. One walk: a pair names an orchestrator's own reference (a task, a pull
// request), which few dispatches share, so the index finds them all and the page sorts those few. With
// an id prefix, likewise: the ids in its range of the primary key (1 in 65,536 of them at 4 digits).
function oneWalk(q: DispatchPageQuery, after: [string, string] | undefined): SQL {
  const conditions = [
    ...(q.metadata === undefined ? [] : [sql`${d.metadata} @> ${jsonb(q.metadata)}`]),
    ...(q.idPrefix === undefined ? [] : [idsFrom(q.idPrefix)]),
    ...keysetWindow(d.createdAt, d.id, q, after),
    ...(q.status === undefined ? [] : [statusIn(q.status)]),
    ...matching(q),
    ...(q.reason === undefined ? [] : [endedFor(q.reason)]),
  ]
  return sql`SELECT d.created_at, d.id FROM dispatches d WHERE ${all(conditions)}
    ORDER BY d.created_at DESC, d.id DESC ${limitOf(q.limit + 1)}`
}

// The ids that start with these hex digits: from the prefix padded with 0s to it padded with fs.
function idsFrom(prefix: string): SQL {
  const uuid = (hex: string) =>
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  const low = uuid(prefix.padEnd(32, '0'))
  const high = uuid(prefix.padEnd(32, 'f'))
  return sql`${d.id} BETWEEN ${low}::uuid AND ${high}::uuid`
}

// The page's statement, unexecuted (the benchmark EXPLAINs it).
export function dispatchesQuery(q: DispatchPageQuery): SQL {
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, isKey)
  return sql`SELECT ${itemColumns('p.created_at')} FROM (${pageKeys(q, after)}) p JOIN dispatches d ON d.id = p.id
    ORDER BY p.created_at DESC, p.id DESC`
}

// Prepared (unlike the report queries): which index a page walks follows from which filters are given,
// i.e. from the statement's text, never from their values, so a generic plan is as good as a custom
// one, and planning nine merged walks cost more than running them (2-5 ms a page).
// A metadata filter is the exception: planned for its values (a pair that many dispatches share walks
// the newest-first index instead of the GIN one).
export async function listDispatches(db: Orm, q: DispatchPageQuery): Promise<DispatchPage> {
  const fetched = await rows<ItemRow>(db, dispatchesQuery(q), q.metadata === undefined ? PREPARED : {})
  const { items, nextCursor } = pageOf(fetched, q.limit, (last) => [last.key, last.id])
  return { items: items.map(toItem), nextCursor }
}

export interface EndingsPageQuery extends DispatchFilters {
  since?: string | undefined // without a cursor: ended at or after (inclusive); else from the horizon on
  limit: number
  cursor?: string | undefined
  // Endings younger than this are not answered yet: see listEndings.
  settleMs: number
}

// An endings cursor says so, so that a listing's cursor is not taken for one.
const ENDED = 'ended'
const FIRST_UUID = '00000000-0000-0000-0000-000000000000'
const LAST_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff'
const micro = (instant: SQL) => sql`to_char(${instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
const isEndingKey = (v: unknown): v is [string, string, typeof ENDED] =>
  Array.isArray(v) && v.length === 3 && isKey(v.slice(0, 2)) && v[2] === ENDED

export function endingsQuery(q: EndingsPageQuery): SQL {
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, isEndingKey)
  const horizon = sql`(now() - make_interval(secs => ${q.settleMs / 1000}::double precision))`
  const from = after
    ? sql`(d.ended_at, d.id) > (${instant(after[0])}, ${after[1]}::uuid)`
    : q.since === undefined
      ? sql`d.ended_at > ${horizon}`
      : sql`d.ended_at >= ${instant(q.since)}`
  const conditions = [
    from,
    sql`d.ended_at <= ${horizon}`,
    ...(q.status === undefined ? [] : [statusIn(q.status)]),
    ...matching(q),
    ...(q.reason === undefined ? [] : [endedFor(q.reason)]),
  ]
  const keys = sql`SELECT d.ended_at, d.id FROM dispatches d WHERE ${all(conditions)}
    ORDER BY d.ended_at, d.id ${limitOf(q.limit + 1)}`
  // One row even when nothing ended: it carries the horizon (the same now() as the walk's) and since.
  const since = q.since === undefined ? sql`NULL` : micro(instant(q.since))
  return sql`SELECT ${micro(horizon)} AS horizon, ${since} AS since, x.*
    FROM (SELECT 1) one LEFT JOIN (
      SELECT ${itemColumns('p.ended_at')}, p.ended_at AS sort_at FROM (${keys}) p JOIN dispatches d ON d.id = p.id
    ) x ON true
    ORDER BY x.sort_at, x.id`
}

// Dispatches that ended after the cursor, oldest ending first. An ending is answered once it is settleMs
// old (the horizon): a write stamps ended_at with its start and becomes visible at its commit, so a later
// stamp can be seen first; the walk stops at the horizon and the next cursor starts from it, so an
// ending that committed within settleMs of its stamp is never skipped. Without a cursor or since, the
// first answer is the horizon alone: endings from now on.
export async function listEndings(db: Orm, q: EndingsPageQuery): Promise<EndingsPage> {
  const fetched = await rows<ItemRow & { horizon: string; since: string | null }>(
    db,
    endingsQuery(q),
    PREPARED,
  )
  const found = fetched.filter((row) => row.id !== null)
  const items = found.slice(0, q.limit)
  const last = items.at(-1)
  const { horizon, since } = fetched[0] as { horizon: string; since: string | null }
  return { items: items.map(toItem), nextCursor: encodeCursor([...nextKey(), ENDED]) }

  // A full page goes on after its last item; any other from the horizon, or from where it started when
  // that is later (a since in the future, a cursor of a coordinator that settles less): never back.
  function nextKey(): [string, string] {
    if (found.length > q.limit && last) return [last.key, last.id]
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, isEndingKey)
    const start: [string, string] | undefined = after
      ? [after[0], after[1]]
      : since === null
        ? undefined
        : [since, FIRST_UUID]
    // both are to_char's microsecond UTC text: their order is the instants'
    return start && start[0] > horizon ? start : [horizon, LAST_UUID]
  }
}
