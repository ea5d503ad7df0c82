// SQL fragments shared by the query files.
import { type SQL, sql } from 'drizzle-orm'

// A timestamptz column as an ISO-8601 UTC string, the same from postgres.js and PGlite.
export const iso = (column: string): SQL =>
  sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)

// An ISO instant as timestamptz, to the microsecond: ::text first, because a timestamptz parameter
// would pass through a JS Date (milliseconds) in the driver.
export const instant = (iso: string): SQL => sql`${iso}::text::timestamptz`

// A JSON value as a jsonb parameter (both drivers pass the text through; NULL stays NULL).
export const jsonb = (value: unknown): SQL =>
  value === undefined || value === null ? sql`NULL::jsonb` : sql`${JSON.stringify(value)}::jsonb`

// The channel a new or requeued dispatch is announced on: coordinators' waiting claims LISTEN to it.
export const NOTIFY_CHANNEL = 'preflight_dispatch'

// Told when a token is taken away (revoked, or dropped from PREFLIGHT_BOOTSTRAP_TOKENS): every
// coordinator forgets the tokens it had resolved.
export const TOKENS_CHANNEL = 'preflight_tokens'
