import { IdPrefix, newId } from '@facilitator/core';
import type { PrismaClient } from '@facilitator/db';
import type { Queues } from '@facilitator/queue';
import type { WebhookEventType, WebhookPayload } from './event-types';

export interface NewWebhookEvent {
  type: WebhookEventType;
  url: string;
  verificationId: string;
  settlementId?: string;
  status: string;
  data: Record<string, unknown>;
}

/**
 * Records an event in Postgres, then enqueues its delivery. The row comes first, so an event is never
 * lost between the two: a pending row without a job is found and enqueued again by the sweeper.
 */
export class WebhookOutbox {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly queues: Pick<Queues, 'webhook'>,
  ) {}

  async publish(event: NewWebhookEvent): Promise<WebhookPayload> {
    const payload: WebhookPayload = {
      event_type: event.type,
      event_id: newId(IdPrefix.WebhookEvent),
      timestamp: new Date().toISOString(),
      verification_id: event.verificationId,
      settlement_id: event.settlementId ?? null,
      status: event.status,
      data: event.data,
    };
    await this.prisma.webhookEvent.create({
      data: {
        id: payload.event_id,
        eventType: payload.event_type,
        verificationId: event.verificationId,
        settlementId: event.settlementId,
        url: event.url,
        payload: payload as unknown as object,
      },
    });
    await this.enqueue(payload.event_id);
    return payload;
  }

  async enqueue(eventId: string): Promise<void> {
    // the job id is the event id: enqueueing twice is harmless
    await this.queues.webhook.add('deliver', { eventId }, { jobId: eventId });
  }
}
