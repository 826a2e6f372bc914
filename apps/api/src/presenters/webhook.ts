import type { WebhookAttempt, WebhookEvent } from '@facilitator/db';
import { categoryOf } from '@facilitator/webhooks';

/** A webhook delivery as operators see it: the event, where it goes, and every attempt. */
export function webhookDeliveryRecord(event: WebhookEvent & { attempts: WebhookAttempt[] }) {
  return {
    id: event.id,
    event_id: event.id,
    event_type: event.eventType,
    url: event.url,
    status: event.status,
    verification_id: event.verificationId,
    settlement_id: event.settlementId,
    attempt_count: event.attemptCount,
    delivered_at: event.deliveredAt?.toISOString() ?? null,
    created_at: event.createdAt.toISOString(),
    attempts: event.attempts.map((a) => ({
      number: a.number,
      at: a.at.toISOString(),
      status_code: a.statusCode,
      // a category (timeout, refused, tls, http_<status> …), never the raw socket error
      error: categoryOf(a.error),
      duration_ms: a.durationMs,
    })),
    payload: event.payload,
  };
}
