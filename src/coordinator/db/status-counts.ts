// Dispatches by status, with the age of each status's oldest row: one statement for the metrics'
// gauges, a count(*) over all dispatches (0.1-0.3 s at a million rows).
import { sql } from 'drizzle-orm'
import { type Orm, rows } from './client.js'

export async function countByStatus(db: Orm): Promise<Map<string, { n: number; oldest: number }>> {
  const found = await rows<{ status: string; n: number; oldest: number }>(
    db,
    sql`select status, count(*)::int as n, extract(epoch from now() - min(created_at))::float8 as oldest
        from dispatches group by status`,
  )
  return new Map(found.map((r) => [r.status, { n: Number(r.n), oldest: Number(r.oldest) }]))
}
