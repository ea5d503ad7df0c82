// Per subagent × requirement figures: counts, last met, and drift — from requirement_rollups, or over a
// window from the reports in it.
import { and, asc, eq, type SQL, sql } from 'drizzle-orm'
import { MAX_UNDECLARED_COUNTS, type SummaryPage, type UndeclaredCount } from '../../contract/index.js'
import { type Orm, rows } from './client.js'
import { decodeCursor, pageOf } from './cursor.js'
import { requirementRollups as ro } from './schema.js'
import { instant, inWindow, judgedResults } from './sql.js'

export interface SummaryFilters {
  subagent?: string | undefined
  since?: string | undefined // ISO 8601, inclusive
  until?: string | undefined // ISO 8601, exclusive
  limit: number
  cursor?: string | undefined
}

const isKey = (v: unknown): v is [string, string, string] =>
  Array.isArray(v) && v.length === 3 && v.every((part) => typeof part === 'string')

const toIso = (value: unknown) => (value === null ? null : new Date(value as string | Date).toISOString())

// The page's query, unexecuted (the benchmark EXPLAINs it); fetches one group more than the limit.
// Without a window, from requirement_rollups: the page's own rows, whatever the history holds. With
// one, subagent by subagent in the page's order (each subagent with reports is in requirement_rollups):
// the results of its reports in the window (preflight_reports_subagent_recent), read from each report
// and grouped, until the page is full.
export function summaryQuery(db: Orm, query: SummaryFilters) {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, isKey)
  if (query.since === undefined && query.until === undefined) return rolledUp(db, query, after)
  const subagents = and(
    query.subagent === undefined ? undefined : eq(ro.subagentName, query.subagent),
    after && sql`${ro.subagentName} >= ${after[0]}`,
  )
  const inWindowOf = sql`p.subagent_name = s.subagent_name${sql.join(
    inWindow(sql`p.created_at`, query).map((c) => sql` and ${c}`),
  )}`
  return db
    .select({
      subagent: sql<string>`s.subagent_name`,
      kind: sql<string>`g.kind`,
      requirement: sql<string>`g.requirement`,
      checks: sql<number>`g.checks`,
      met: sql<number>`g.met`,
      unmet: sql<number>`g.unmet`,
      error: sql<number>`g.error`,
      lastMetAt: sql`g.last_met_at`.mapWith(toIso),
      firstUnmetAfterMetAt: driftSince(query).mapWith(toIso),
    })
    .from(
      sql`(select ${ro.subagentName} from ${ro} ${subagents ? sql`where ${subagents}` : sql``}
            group by ${ro.subagentName} order by ${ro.subagentName}) s
          cross join lateral (
            select r.kind, r.requirement, count(*)::int as checks,
                   (count(*) filter (where r.status = 'met'))::int as met,
                   (count(*) filter (where r.status = 'unmet'))::int as unmet,
                   (count(*) filter (where r.status = 'error'))::int as error,
                   max(p.created_at) filter (where r.status = 'met') as last_met_at
            from preflight_reports p cross join lateral (
              select e ->> 'kind' as kind, e ->> 'requirement' as requirement, e ->> 'status' as status
              from jsonb_array_elements(${judgedResults('p')}) as e) r
            where ${inWindowOf}
            group by r.kind, r.requirement) g`,
    )
    .where(after && sql`(s.subagent_name, g.kind, g.requirement) > (${after[0]}, ${after[1]}, ${after[2]})`)
    .orderBy(sql`s.subagent_name, g.kind, g.requirement`)
    .limit(query.limit + 1)
}

function rolledUp(db: Orm, query: SummaryFilters, after: [string, string, string] | undefined) {
  return db
    .select({
      subagent: ro.subagentName,
      kind: ro.kind,
      requirement: ro.requirement,
      checks: sql<number>`${ro.checks}::int`,
      met: sql<number>`${ro.met}::int`,
      unmet: sql<number>`${ro.unmet}::int`,
      error: sql<number>`${ro.error}::int`,
      lastMetAt: sql`${ro.lastMetAt}`.mapWith(toIso),
      firstUnmetAfterMetAt: driftAfterLastMet.mapWith(toIso),
    })
    .from(ro)
    .where(
      and(
        query.subagent === undefined ? undefined : eq(ro.subagentName, query.subagent),
        after &&
          sql`(${ro.subagentName}, ${ro.kind}, ${ro.requirement}) > (${after[0]}, ${after[1]}, ${after[2]})`,
      ),
    )
    .orderBy(asc(ro.subagentName), asc(ro.kind), asc(ro.requirement))
    .limit(query.limit + 1)
}

// The drift of a rolled-up row: the first result after its last met one is unmet or in error by
// definition, so this reads one entry of requirement_results_summary (in its order: with min() the
// planner may choose to aggregate the whole failing streak, as it did on the benchmark's history).
const driftAfterLastMet = sql`(select later.created_at from requirement_results as later
  where later.subagent_name = requirement_rollups.subagent_name and later.kind = requirement_rollups.kind
    and later.requirement = requirement_rollups.requirement and later.status <> 'met'
    and later.created_at > requirement_rollups.last_met_at
  order by later.created_at limit 1)`

export async function summarise(db: Orm, query: SummaryFilters): Promise<SummaryPage> {
  const page = pageOf(await summaryQuery(db, query), query.limit, (last) => [
    last.subagent,
    last.kind,
    last.requirement,
  ])
  const subagents = query.subagent ? [query.subagent] : [...new Set(page.items.map((item) => item.subagent))]
  return { ...page, undeclared: await undeclaredCounts(db, subagents, query) }
}

// Per subagent and need, from the completions of its dispatches that ended in the window with needs no
// requirement declared (the partial index dispatches_undeclared holds just those).
async function undeclaredCounts(
  db: Orm,
  subagents: string[],
  window: Pick<SummaryFilters, 'since' | 'until'>,
): Promise<UndeclaredCount[]> {
  if (subagents.length === 0) return []
  const when = inWindow(sql.raw('d.ended_at'), window).map((condition) => sql` AND ${condition}`)
  const names = sql.join(
    subagents.map((name) => sql`${name}`),
    sql`, `,
  )
  const found = await rows<Omit<UndeclaredCount, 'lastAt'> & { last_at: string | Date }>(
    db,
    sql`SELECT d.subagent_name AS subagent, u ->> 'kind' AS kind, coalesce(u ->> 'name', u ->> 'path') AS need,
          (count(*) FILTER (WHERE u ->> 'state' = 'missing'))::int AS missing,
          (count(*) FILTER (WHERE u ->> 'state' = 'present'))::int AS present,
          max(d.ended_at) AS last_at
        FROM dispatches d CROSS JOIN LATERAL jsonb_array_elements(d.completion -> 'undeclared') AS u
        WHERE d.completion ? 'undeclared' AND d.subagent_name IN (${names})${sql.join(when)}
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3 LIMIT ${MAX_UNDECLARED_COUNTS}`,
  )
  return found.map(({ last_at, ...count }) => ({ ...count, lastAt: toIso(last_at) as string }))
}
// Drift: the earliest unmet/error result strictly after the latest met one (within the window), i.e.
// when the current failing streak of a requirement that used to hold began. Null while the latest
// result is met, and when the requirement was never met (that is a misconfiguration, not drift). The
// results that are not met have rows (requirement_results_summary).
function driftSince(q: SummaryFilters): SQL {
  const until = q.until === undefined ? sql`` : sql`and later.created_at < ${instant(q.until)}`
  return sql`(select min(later.created_at) from requirement_results as later
    where later.subagent_name = s.subagent_name and later.kind = g.kind and later.requirement = g.requirement
      and later.status <> 'met' and later.created_at > g.last_met_at ${until})`
}
