// Sends the outbox's deliveries: takes the due ones (held for this coordinator alone while it sends),
// POSTs each signed body, and marks it delivered, due again after a backoff, or given up. Woken when a
// delivery is queued (NOTIFY) and otherwise looks every `pollMs`; a coordinator that stops mid-send
// leaves its held rows to be taken over when the hold ends, so a delivery may arrive twice but is never lost.
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signWebhook,
  type WebhookBody,
} from '../../contract/index.js'
import type { Log } from '../../log/log.js'
import type { Orm } from '../db/client.js'
import { type DueDelivery, markDelivered, markFailed, takeDue } from '../db/webhooks.js'

export interface DeliveryConfig {
  // how often the outbox is looked at without a wake-up
  pollMs: number
  // the first retry comes after this long, each next one after twice as long (at most an hour)
  retryBaseMs: number
  // tries in all before a delivery is given up
  maxAttempts: number
  // a receiver answers within this long, or the try failed
  timeoutMs: number
}

export const DEFAULT_DELIVERY: DeliveryConfig = {
  pollMs: 2_000,
  retryBaseMs: 10_000,
  maxAttempts: 10,
  timeoutMs: 10_000,
}

const BATCH = 10
const MAX_RETRY_MS = 60 * 60 * 1000

export interface Deliverer {
  wake(): void
  stop(): Promise<void>
}

export function startDeliverer(db: Orm, config: DeliveryConfig, log: Log): Deliverer {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let woken: (() => void) | undefined
  const loop = (async () => {
    while (!stopped) {
      let taken = 0
      try {
        // held past the longest a send may take, so a slow receiver is never sent the same delivery twice
        const due = await takeDue(db, BATCH, config.timeoutMs * 2 + 1_000)
        taken = due.length
        await Promise.all(due.map((d) => deliver(db, d, config)))
      } catch (err) {
        log.warn('webhook delivery failed', { err })
      }
      if (taken < BATCH && !stopped)
        await new Promise<void>((resolve) => {
          woken = () => {
            clearTimeout(timer)
            resolve()
          }
          timer = setTimeout(resolve, config.pollMs)
        })
    }
  })()
  return {
    wake: () => woken?.(),
    async stop() {
      stopped = true
      clearTimeout(timer)
      woken?.()
      await loop
    },
  }
}

async function deliver(db: Orm, d: DueDelivery, config: DeliveryConfig): Promise<void> {
  const body: WebhookBody = { id: d.id, event: d.event, createdAt: d.created_at, data: d.payload }
  const text = JSON.stringify(body)
  let status: number | null = null
  let error: string
  try {
    const res = await fetch(d.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [SIGNATURE_HEADER]: signWebhook(d.secret, text),
        [EVENT_HEADER]: d.event,
        [DELIVERY_HEADER]: d.id,
      },
      body: text,
      // a receiver that moved says so by changing its registration, not by redirecting a signed body
      redirect: 'manual',
      signal: AbortSignal.timeout(config.timeoutMs),
    })
    status = res.status
    await res.body?.cancel()
    if (res.ok) return await markDelivered(db, d.id, res.status)
    error = `HTTP ${res.status}`
  } catch (err) {
    error = describe(err)
  }
  const retryInMs =
    d.attempts >= config.maxAttempts
      ? null
      : Math.min(config.retryBaseMs * 2 ** (d.attempts - 1), MAX_RETRY_MS)
  await markFailed(db, d.id, { status, error: error.slice(0, 200) }, retryInMs)
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = (err as { cause?: { code?: string; message?: string } }).cause
  if (err.name === 'TimeoutError') return 'no answer in time'
  return cause?.code ?? cause?.message ?? err.message
}
