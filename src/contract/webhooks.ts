// Alerts: webhooks an admin registers, what each delivery carries, and how it is signed.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { z } from 'zod'
import { Timestamp } from './timestamp.js'

export const WEBHOOK_EVENTS = ['dispatch.failed', 'requirement.drifted', 'requirement.undeclared'] as const
export const WebhookEvent = z.enum(WEBHOOK_EVENTS)
export type WebhookEvent = z.infer<typeof WebhookEvent>

export const MIN_WEBHOOK_SECRET_LENGTH = 16
export const MAX_WEBHOOKS = 100

export const CreateWebhookRequest = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, hostname: z.regexes.hostname })
    .max(2048)
    .describe('where deliveries are POSTed (http or https)'),
  events: z.array(WebhookEvent).min(1).max(WEBHOOK_EVENTS.length),
  secret: z
    .string()
    .min(MIN_WEBHOOK_SECRET_LENGTH)
    .max(256)
    .optional()
    .describe('the HMAC-SHA256 key; one is generated when absent. Answered once, at creation'),
})
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>

export const WebhookView = z.object({
  id: z.number().int().min(1),
  url: z.string(),
  events: z.array(WebhookEvent),
  createdAt: Timestamp,
})
export type WebhookView = z.infer<typeof WebhookView>

export const WebhookCreated = WebhookView.extend({ secret: z.string() })
export type WebhookCreated = z.infer<typeof WebhookCreated>

export const WebhookList = z.object({ items: z.array(WebhookView) })
export type WebhookList = z.infer<typeof WebhookList>

export const WebhookId = z.object({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, 'a webhook id is a whole number from 1')
    .transform(Number),
})

export const DeliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(2048).optional().describe('nextCursor of the previous page, as received'),
})
export type DeliveriesQuery = z.infer<typeof DeliveriesQuery>

// One delivery as the log shows it, newest first.
export const DeliveryView = z.object({
  id: z.number().int().min(1),
  event: WebhookEvent,
  attempts: z.number().int().min(0),
  lastStatus: z
    .number()
    .int()
    .nullable()
    .describe('the HTTP status of the last try; null when none answered'),
  lastError: z.string().nullable(),
  createdAt: Timestamp,
  nextAttemptAt: Timestamp.nullable().describe('null once delivered or given up'),
  deliveredAt: Timestamp.nullable(),
  failedAt: Timestamp.nullable().describe('given up after the last retry'),
})
export type DeliveryView = z.infer<typeof DeliveryView>

export const DeliveryPage = z.object({ items: z.array(DeliveryView), nextCursor: z.string().nullable() })
export type DeliveryPage = z.infer<typeof DeliveryPage>

// The body POSTed to a webhook. `id` is the delivery's: the same on every try, for receivers that
// must act once (a delivery may arrive twice when a coordinator stops mid-send).
export interface WebhookBody {
  id: string
  event: WebhookEvent
  createdAt: string
  data: Record<string, unknown>
}

// Headers of every delivery.
export const SIGNATURE_HEADER = 'preflight-signature'
export const EVENT_HEADER = 'preflight-event'
export const DELIVERY_HEADER = 'preflight-delivery'
// A receiver refuses a signature older (or newer) than this: a recorded delivery cannot be replayed later.
export const SIGNATURE_TOLERANCE_S = 300

// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
export function signWebhook(secret: string, body: string, nowMs = Date.now()): string {
  const t = Math.floor(nowMs / 1000)
  return `t=${t},v1=${hmac(secret, t, body)}`
}

// A receiver's check: the signature is ours for this body, and made within the tolerance of `nowMs`.
export function verifyWebhook(secret: string, header: string, body: string, nowMs = Date.now()): boolean {
  const parts = new Map(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]))
  const t = Number(parts.get('t'))
  const given = Buffer.from(parts.get('v1') ?? '', 'hex')
  if (!Number.isSafeInteger(t) || Math.abs(nowMs / 1000 - t) > SIGNATURE_TOLERANCE_S) return false
  const want = Buffer.from(hmac(secret, t, body), 'hex')
  return given.length === want.length && timingSafeEqual(given, want)
}

const hmac = (secret: string, t: number, body: string) =>
  createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex')
