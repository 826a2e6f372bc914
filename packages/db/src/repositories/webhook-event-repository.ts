import type { PoolClient } from 'pg';
import type { PrismaClient, WebhookAttempt, WebhookEvent } from '../generated/prisma/client';
import { runQuery } from './pg-query';

/** A webhook_events row to store (WebhookOutbox's webhookEventRow makes them). */
export interface WebhookEventRow {
  id: string;
  eventType: string;
  verificationId: string;
  settlementId: string | null;
  url: string;
  payload: object;
}

export type WebhookEventWithAttempts = WebhookEvent & { attempts: WebhookAttempt[] };
export type WebhookEventWithMerchant = WebhookEvent & { verification: { merchant: string | null } | null };

export interface AttemptRecord {
  eventId: string;
  number: number;
  statusCode?: number;
  /** the outcome category of a failed attempt (timeout, refused, http_500, …) */
  error?: string;
  durationMs: number;
  /** what the event becomes: delivered, failed for good, or still pending (another attempt follows) */
  eventStatus: 'delivered' | 'failed' | 'pending';
}

const INSERT = `
  INSERT INTO webhook_events (id, event_type, verification_id, settlement_id, url, payload, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6::jsonb, now(), now())`;

/**
 * The one owner of webhook_events and webhook_attempts: the outbox stores events here, deliveries record
 * their attempts here, the sweeper and the API read them here, retention deletes them here.
 */
export class WebhookEventRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async insert(row: WebhookEventRow): Promise<void> {
    await this.prisma.webhookEvent.create({ data: { ...row, settlementId: row.settlementId ?? undefined } });
  }

  /** Inside another repository's transaction (a final settlement transition and its event commit together). */
  static async insertWith(client: PoolClient, row: WebhookEventRow): Promise<void> {
    await runQuery(client, {
      name: 'webhook_event_insert',
      text: INSERT,
      values: [row.id, row.eventType, row.verificationId, row.settlementId, row.url, JSON.stringify(row.payload)],
    });
  }

  findWithMerchant(id: string): Promise<WebhookEventWithMerchant | null> {
    return this.prisma.webhookEvent.findUnique({ where: { id }, include: { verification: { select: { merchant: true } } } });
  }

  findWithAttempts(id: string): Promise<WebhookEventWithAttempts | null> {
    return this.prisma.webhookEvent.findUnique({ where: { id }, include: { attempts: { orderBy: { number: 'asc' } } } });
  }

  /** Deliveries of a verification or a settlement, oldest first, with every attempt; only a merchant's own when `merchant` is given. */
  list(filter: { verificationId?: string; settlementId?: string; merchant?: string }, limit: number): Promise<WebhookEventWithAttempts[]> {
    return this.prisma.webhookEvent.findMany({
      where: {
        ...(filter.verificationId !== undefined ? { verificationId: filter.verificationId } : {}),
        ...(filter.settlementId !== undefined ? { settlementId: filter.settlementId } : {}),
        ...(filter.merchant !== undefined ? { verification: { merchant: filter.merchant } } : {}),
      },
      include: { attempts: { orderBy: { number: 'asc' } } },
      orderBy: { createdAt: 'asc' },
      take: limit,
    });
  }

  /** One attempt and the event's new state, together. */
  async recordAttempt(attempt: AttemptRecord): Promise<void> {
    const { eventId, eventStatus } = attempt;
    await this.prisma.$transaction([
      this.prisma.webhookAttempt.create({
        data: { eventId, number: attempt.number, statusCode: attempt.statusCode, error: attempt.error, durationMs: attempt.durationMs },
      }),
      this.prisma.webhookEvent.update({
        where: { id: eventId },
        data: {
          attemptCount: { increment: 1 },
          ...(eventStatus === 'delivered' ? { status: 'delivered', deliveredAt: new Date() } : eventStatus === 'failed' ? { status: 'failed' } : {}),
        },
      }),
    ]);
  }

  /** A failed event back to pending for another round of attempts; false when it was not failed. */
  async reopenFailed(id: string): Promise<boolean> {
    const { count } = await this.prisma.webhookEvent.updateMany({ where: { id, status: 'failed' }, data: { status: 'pending' } });
    return count > 0;
  }

  /** Pending events untouched since `olderThan`: their job may be lost. */
  findStalePending(olderThan: Date, limit: number): Promise<WebhookEvent[]> {
    return this.prisma.webhookEvent.findMany({ where: { status: 'pending', updatedAt: { lt: olderThan } }, take: limit });
  }

  /** Retention: the events (and attempts) of rejected verifications created before `before`. */
  async deleteOfRejectedVerifications(before: Date): Promise<number> {
    const rejected = { verification: { status: 'rejected' as const, createdAt: { lt: before } } };
    const [, events] = await this.prisma.$transaction([
      this.prisma.webhookAttempt.deleteMany({ where: { event: rejected } }),
      this.prisma.webhookEvent.deleteMany({ where: rejected }),
    ]);
    return events.count;
  }
}
