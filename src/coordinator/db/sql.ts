// SQL fragments shared by the query files.
import { type SQL, type SQLWrapper, sql } from 'drizzle-orm'

// A timestamptz column as an ISO-8601 UTC string, the same from postgres.js and PGlite: as SQL text, and
// as a fragment.
export const isoText = (column: string, fraction: 'MS' | 'US' = 'MS'): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.${fraction}"Z"')`
export const iso = (column: string): SQL => sql.raw(isoText(column))

// The same to the microsecond: the instant of a keyset cursor.
export const isoMicro = (column: string): SQL => sql.raw(isoText(column, 'US'))

// An ISO instant as timestamptz, to the microsecond: ::text first, because a timestamptz parameter
// would pass through a JS Date (milliseconds) in the driver.
export const instant = (iso: string): SQL => sql`${iso}::text::timestamptz`

// since (inclusive) and until (exclusive), ISO 8601, on a created_at column.
export function inWindow(
  createdAt: SQLWrapper,
  f: { since?: string | undefined; until?: string | undefined },
): SQL[] {
  return [
    ...(f.since === undefined ? [] : [sql`${createdAt} >= ${instant(f.since)}`]),
    ...(f.until === undefined ? [] : [sql`${createdAt} < ${instant(f.until)}`]),
  ]
}

// A keyset page, newest first on (created_at, id): the window, and after the cursor (the previous page's
// last row: its created_at to the microsecond, and its id) — strictly older, the id breaking a tie.
export function keysetWindow(
  createdAt: SQLWrapper,
  id: SQLWrapper,
  f: { since?: string | undefined; until?: string | undefined },
  after: readonly [string, string | number] | undefined,
): SQL[] {
  return [
    ...inWindow(createdAt, f),
    ...(after === undefined ? [] : [sql`(${createdAt}, ${id}) < (${instant(after[0])}, ${after[1]})`]),
  ]
}

// A JSON value as the text of a jsonb parameter; NULL (not the JSON `null`) for none: a labels column
// holding JSON `null` would fail every claim's labels check.
export const jsonText = (value: unknown): string | null =>
  value === undefined || value === null ? null : JSON.stringify(value)

// A JSON value as a jsonb parameter (both drivers pass the text through; NULL stays NULL).
export const jsonb = (value: unknown): SQL => sql`${jsonText(value)}::jsonb`

// A report's results as the coordinator judged them (migration 0016): its own list where a
// report-incomplete verdict added results, else the ones it was sent with. `table`: the report's
// table or alias in the statement.
export const judgedResultsText = (table: string): string =>
  `coalesce(${table}.judged, ${table}.report -> 'results')`
export const judgedResults = (table: string): SQL => sql.raw(judgedResultsText(table))

// An event for a dispatch's log, as a one-element array to append to its `events` column
// (`events = events || ${event(…)}` in the statement that changes the row, whose lock orders them):
// the step, the statement's instant, the attempt, and the detail when there is one (no key when NULL).
// As drizzle SQL (a string step is a parameter) or as text for a statement (statement.ts).
const eventWith = <T>(
  fill: (template: TemplateStringsArray, ...parts: T[]) => T,
  at: T,
  step: T,
  attempt: T,
  detail?: T,
): T =>
  detail === undefined
    ? fill`jsonb_build_array(jsonb_build_object('step', (${step})::text, 'at', ${at}, 'attempt', (${attempt})::int))`
    : fill`jsonb_build_array(jsonb_build_object('step', (${step})::text, 'at', ${at}, 'attempt', (${attempt})::int)
                             || CASE WHEN ${detail} IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('detail', ${detail}) END)`

const text = (template: TemplateStringsArray, ...parts: string[]) => String.raw({ raw: template }, ...parts)

export const event = (step: SQL | string, attempt: SQL | number, detail?: SQL): SQL =>
  eventWith<unknown>(sql, iso('now()'), step, attempt, detail) as SQL

export const eventText = (step: string, attempt: string, detail?: string): string =>
  eventWith(text, isoText('now()'), step, attempt, detail)

// Records why a dispatch ended (dispatch_reasons, what the listing's reason filter walks): one row per
// code of `reasons` (a jsonb array's SQL text), for the dispatch a CTE of the same statement returned
// (its id, final status, created_at, subagent_name and worker_id). No codes, no rows.
export const insertReasons = (cte: string, reasons: string): string =>
  `INSERT INTO dispatch_reasons (dispatch_id, reason, status, created_at, subagent_name, worker_id)
      SELECT ${cte}.id, r.reason, ${cte}.status, ${cte}.created_at, ${cte}.subagent_name, ${cte}.worker_id
      FROM ${cte}, jsonb_array_elements_text(${reasons}) AS r(reason)
      ON CONFLICT DO NOTHING`

// The channel a new or requeued dispatch is announced on: coordinators' waiting claims LISTEN to it.
export const NOTIFY_CHANNEL = 'preflight_dispatch'

// Told, with the dispatch's id, when a dispatch reaches its final status (a trigger of migration 0009):
// every coordinator wakes what waits for it.
export const ENDED_CHANNEL = 'preflight_dispatch_ended'

// Told when a token is taken away (revoked, or dropped from PREFLIGHT_BOOTSTRAP_TOKENS): every
// coordinator forgets the tokens it had resolved.
export const TOKENS_CHANNEL = 'preflight_tokens'
