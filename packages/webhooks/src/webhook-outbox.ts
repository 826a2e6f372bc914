import { IdPrefix, newId } from '@facilitator/core';
import type { WebhookEventRepository, WebhookEventRow } from '@facilitator/db';
import { enqueueWebhookDelivery, type Queues } from '@facilitator/queue';
import type { WebhookEventType, WebhookPayload } from './event-types';
import type { WebhookEventMac } from './event-mac';

export interface NewWebhookEvent {
  type: WebhookEventType;
  url: string;
  verificationId: string;
  settlementId?: string;
  /** the payment's payTo: the event is signed with this merchant's secret */
  merchant: string;
  status: string;
  data: Record<string, unknown>;
}

/**
 * The stored row of an event, its payload (with a new event id and timestamp) and its MAC included (the worker
 * delivers only an event whose MAC verifies). For writers that store it themselves, e.g. the settlement
 * repository in the same statement batch as a final transition (WebhookOutbox.row).
 */
export function webhookEventRow(event: NewWebhookEvent, mac: WebhookEventMac): WebhookEventRow & { payload: WebhookPayload } {
  const payload: WebhookPayload = {
    event_type: event.type,
    event_id: newId(IdPrefix.WebhookEvent),
    timestamp: new Date().toISOString(),
    verification_id: event.verificationId,
    settlement_id: event.settlementId ?? null,
    merchant_address: event.merchant.toLowerCase(),
    status: event.status,
    data: event.data,
  };
  const fields = { id: payload.event_id, eventType: payload.event_type, url: event.url, payload, merchant: payload.merchant_address };
  return { ...fields, verificationId: event.verificationId, settlementId: event.settlementId ?? null, mac: mac.of(fields) };
}

/**
 * Records an event in Postgres, then enqueues its delivery. The row comes first (a final settlement
 * transition stores its event in its own transaction, through the settlement repository), so an event is
 * never lost between the two: a pending row without a job is found and enqueued again by the sweeper.
 */
export class WebhookOutbox {
  constructor(
    private readonly events: WebhookEventRepository,
    private readonly queues: Pick<Queues, 'webhook'>,
    private readonly mac: WebhookEventMac,
  ) {}

  /** An event's row, MAC included, for a writer that stores it in its own transaction. */
  row(event: NewWebhookEvent): WebhookEventRow & { payload: WebhookPayload } {
    return webhookEventRow(event, this.mac);
  }

  /** Stores and enqueues in one go. */
  async publish(event: NewWebhookEvent): Promise<WebhookPayload> {
    const row = this.row(event);
    await this.events.insert(row);
    await this.enqueue(row.payload.event_id);
    return row.payload;
  }

  async enqueue(eventId: string): Promise<void> {
    // the job id is the event id: enqueueing twice is harmless
    await enqueueWebhookDelivery(this.queues, eventId);
  }

  /**
   * Sends an event again, with the same event_id, for another full round of attempts. Only a delivery
   * that failed for good can be redelivered; returns false otherwise.
   */
  async redeliver(eventId: string): Promise<boolean> {
    if (!(await this.events.reopenFailed(eventId))) return false;
    const job = await this.queues.webhook.getJob(eventId);
    if (job && (await job.isFailed())) await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    else {
      await job?.remove();
      await this.enqueue(eventId);
    }
    return true;
  }
}
