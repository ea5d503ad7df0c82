// Webhooks and their outbox of deliveries (rows written by the triggers of migrations/0007).
import { sql } from 'drizzle-orm'
import type { DeliveryPage, DeliveryView, WebhookEvent, WebhookView } from '../../contract/index.js'
import { type Orm, one, rows } from './client.js'
import { decodeCursor, pageOf } from './cursor.js'
import { iso } from './sql.js'

// Told when a delivery is queued (by the triggers): coordinators send at once instead of at their next poll.
export const WEBHOOKS_CHANNEL = 'preflight_webhooks'

// events as JSON: the client parses no array type (client.ts)
const view = sql`id::float8 AS id, url, to_jsonb(events) AS events, ${iso('created_at')} AS "createdAt"`

// Stores a webhook unless `max` exist already (then undefined).
export async function insertWebhook(
  db: Orm,
  hook: { url: string; events: WebhookEvent[]; secret: string },
  max: number,
): Promise<WebhookView | undefined> {
  return one<WebhookView>(
    db,
    sql`INSERT INTO webhooks (url, events, secret)
        SELECT ${hook.url}, ${`{${hook.events.join(',')}}`}::text[], ${hook.secret}
        WHERE (SELECT count(*) FROM webhooks) < ${max}
        RETURNING ${view}`,
  )
}

export function listWebhooks(db: Orm): Promise<WebhookView[]> {
  return rows<WebhookView>(db, sql`SELECT ${view} FROM webhooks ORDER BY id`)
}

export async function deleteWebhook(db: Orm, id: number): Promise<boolean> {
  return (await rows(db, sql`DELETE FROM webhooks WHERE id = ${id} RETURNING id`)).length > 0
}

export async function webhookExists(db: Orm, id: number): Promise<boolean> {
  return (await one(db, sql`SELECT 1 AS one FROM webhooks WHERE id = ${id}`)) !== undefined
}

const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0

// A webhook's deliveries, newest first, keyset-paginated.
export async function listDeliveries(
  db: Orm,
  webhookId: number,
  query: { limit: number; cursor?: string | undefined },
): Promise<DeliveryPage> {
  const before = query.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(query.cursor, isId)
  const list = await rows<DeliveryView>(
    db,
    sql`SELECT id::float8 AS id, event, attempts, last_status AS "lastStatus", last_error AS "lastError",
               ${iso('created_at')} AS "createdAt",
               CASE WHEN delivered_at IS NULL AND failed_at IS NULL THEN ${iso('next_attempt_at')} END AS "nextAttemptAt",
               ${iso('delivered_at')} AS "deliveredAt", ${iso('failed_at')} AS "failedAt"
        FROM webhook_deliveries WHERE webhook_id = ${webhookId} AND id < ${before}
        ORDER BY id DESC LIMIT ${query.limit + 1}`,
  )
  return pageOf(list, query.limit, (last) => last.id)
}

export interface DueDelivery {
  id: string
  event: WebhookEvent
  payload: Record<string, unknown>
  attempts: number
  url: string
  secret: string
  created_at: string
}

// Takes up to `limit` deliveries that are due and held by nobody, and holds them for `holdMs`: another
// coordinator skips them until then (and takes them over if this one stops before it answers).
export function takeDue(db: Orm, limit: number, holdMs: number): Promise<DueDelivery[]> {
  return rows<DueDelivery>(
    db,
    sql`UPDATE webhook_deliveries d
        SET locked_until = now() + ${holdMs} * interval '1 millisecond', attempts = d.attempts + 1
        FROM webhooks w
        WHERE w.id = d.webhook_id AND d.id IN (
          SELECT id FROM webhook_deliveries
          WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
            AND (locked_until IS NULL OR locked_until < now())
          ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING d.id::text AS id, d.event, d.payload, d.attempts, w.url, w.secret, ${iso('d.created_at')} AS created_at`,
  )
}

export async function markDelivered(db: Orm, id: string, status: number): Promise<void> {
  await db.execute(
    sql`UPDATE webhook_deliveries SET delivered_at = now(), last_status = ${status}, last_error = NULL,
          locked_until = NULL WHERE id = ${id}`,
  )
}

// A failed try: again after `retryInMs`, or given up for good when that is null.
export async function markFailed(
  db: Orm,
  id: string,
  failure: { status: number | null; error: string },
  retryInMs: number | null,
): Promise<void> {
  await db.execute(
    sql`UPDATE webhook_deliveries SET last_status = ${failure.status}, last_error = ${failure.error},
          locked_until = NULL,
          next_attempt_at = CASE WHEN ${retryInMs}::float8 IS NULL THEN next_attempt_at
                                 ELSE now() + ${retryInMs}::float8 * interval '1 millisecond' END,
          failed_at = CASE WHEN ${retryInMs}::float8 IS NULL THEN now() END
        WHERE id = ${id}`,
  )
}
