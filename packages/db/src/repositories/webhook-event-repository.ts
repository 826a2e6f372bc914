import type { PoolClient } from 'pg';
import type { PrismaClient, WebhookAttempt, WebhookDeliveryStatus, WebhookEvent } from '../generated/prisma/client';
import type { Pool } from '../pg-pool';
import { dateColumn, optionalDateColumn, runCount, runQuery } from './pg-query';
import { NEWEST_FIRST, olderThan, type KeysetCursor } from './keyset';

/** A webhook_events row to store (WebhookOutbox's webhookEventRow makes them). */
export interface WebhookEventRow {
  id: string;
  eventType: string;
  verificationId: string;
  settlementId: string | null;
  url: string;
  payload: object;
  /** the payment's payTo (lowercase), whose secret signs the event: the merchant page lists its deliveries by it */
  merchant?: string;
  /** HMAC keyed from WEBHOOK_SECRET over the event (WebhookEventMac): the worker delivers only a row whose MAC verifies */
  mac: string;
}

type WebhookEventWithAttempts = WebhookEvent & { attempts: WebhookAttempt[] };
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
  INSERT INTO webhook_events (id, event_type, verification_id, settlement_id, url, payload, merchant, mac, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, now(), now())`;

// A delivery's read: the event and its merchant (the payment's payTo), in one statement.
const FIND_WITH_MERCHANT = `
  SELECT e.id, e.event_type, e.verification_id, e.settlement_id, e.merchant, e.url, e.payload, e.mac, e.status, e.attempt_count,
         e.delivered_at, e.created_at, e.updated_at, v.id AS v_id, v.merchant AS v_merchant
    FROM webhook_events e LEFT JOIN verifications v ON v.id = e.verification_id
   WHERE e.id = $1`;

// A delivery's write: the attempt and the event's new state in one statement, so they commit together.
const RECORD_ATTEMPT = `
  WITH attempt AS (
    INSERT INTO webhook_attempts (event_id, number, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5)
  )
  UPDATE webhook_events
     SET attempt_count = attempt_count + 1,
         status = CASE WHEN $6::text = 'pending' THEN status ELSE $6::"WebhookDeliveryStatus" END,
         delivered_at = CASE WHEN $6::text = 'delivered' THEN now() ELSE delivered_at END,
         updated_at = now()
   WHERE id = $1`;

// Retention: the events of verifications (their own, not their settlements') or of settlements that are
// about to be deleted, with their attempts, in one statement (the attempts' foreign key is checked at its end).
const DELETE_OF_VERIFICATIONS = `
  WITH doomed AS (SELECT id FROM webhook_events WHERE verification_id = ANY($1::text[]) AND settlement_id IS NULL),
       attempts AS (DELETE FROM webhook_attempts a USING doomed d WHERE a.event_id = d.id)
  DELETE FROM webhook_events e USING doomed d WHERE e.id = d.id`;
const DELETE_OF_SETTLEMENTS = `
  WITH doomed AS (SELECT id FROM webhook_events WHERE settlement_id = ANY($1::text[])),
       attempts AS (DELETE FROM webhook_attempts a USING doomed d WHERE a.event_id = d.id)
  DELETE FROM webhook_events e USING doomed d WHERE e.id = d.id`;

function eventFromColumns(r: Record<string, unknown>): WebhookEventWithMerchant {
  return {
    id: r.id as string,
    eventType: r.event_type as string,
    verificationId: r.verification_id as string | null,
    settlementId: r.settlement_id as string | null,
    merchant: r.merchant as string | null,
    url: r.url as string,
    payload: r.payload as WebhookEvent['payload'],
    mac: (r.mac as string | null | undefined) ?? null,
    status: r.status as WebhookDeliveryStatus,
    attemptCount: r.attempt_count as number,
    deliveredAt: optionalDateColumn(r.delivered_at),
    createdAt: dateColumn(r.created_at),
    updatedAt: dateColumn(r.updated_at),
    verification: r.v_id == null ? null : { merchant: r.v_merchant as string | null },
  };
}

/**
 * The one owner of webhook_events and webhook_attempts: the outbox stores events here, deliveries record
 * their attempts here, the sweeper and the API read them here, retention deletes them here. A delivery's
 * read and write are one prepared `pg` statement each (the worker's hot path: through Prisma they were
 * three queries and a transaction of four round trips per attempt); Prisma serves the rest.
 */
export class WebhookEventRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

  async insert(row: WebhookEventRow): Promise<void> {
    await WebhookEventRepository.insertWith(this.pool, row);
  }

  /** Inside another repository's transaction (a final settlement transition and its event commit together). */
  static async insertWith(client: PoolClient | Pool, row: WebhookEventRow): Promise<void> {
    await runQuery(client, {
      name: 'webhook_event_insert',
      text: INSERT,
      values: [row.id, row.eventType, row.verificationId, row.settlementId, row.url, JSON.stringify(row.payload), row.merchant?.toLowerCase() ?? null, row.mac],
    });
  }

  async findWithMerchant(id: string): Promise<WebhookEventWithMerchant | null> {
    const [row] = await runQuery(this.pool, { name: 'webhook_event_find_with_merchant', text: FIND_WITH_MERCHANT, values: [id] });
    return row ? eventFromColumns(row) : null;
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

  /** A merchant's deliveries, newest first, with every attempt; `limit` of them after `before` (the merchant page). */
  pageOfMerchant(merchant: string, limit: number, before?: KeysetCursor): Promise<WebhookEventWithAttempts[]> {
    return this.prisma.webhookEvent.findMany({
      where: { merchant, ...olderThan(before) },
      include: { attempts: { orderBy: { number: 'asc' } } },
      orderBy: NEWEST_FIRST,
      take: limit,
    });
  }

  /** One attempt and the event's new state, together. */
  async recordAttempt(attempt: AttemptRecord): Promise<void> {
    const { eventId, eventStatus } = attempt;
    await runQuery(this.pool, {
      name: 'webhook_event_record_attempt',
      text: RECORD_ATTEMPT,
      values: [eventId, attempt.number, attempt.statusCode ?? null, attempt.error ?? null, attempt.durationMs, eventStatus],
    });
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

  /**
   * Retention: the events (and their attempts) of these verifications that belong to no settlement (the
   * retention job deletes verifications no settlement refers to); returns how many events went.
   */
  async deleteOfVerifications(verificationIds: string[]): Promise<number> {
    return this.deleteWith('webhook_events_delete_of_verifications', DELETE_OF_VERIFICATIONS, verificationIds);
  }

  /** Retention: the events (and their attempts) of these settlements; returns how many events went. */
  async deleteOfSettlements(settlementIds: string[]): Promise<number> {
    return this.deleteWith('webhook_events_delete_of_settlements', DELETE_OF_SETTLEMENTS, settlementIds);
  }

  private async deleteWith(name: string, text: string, ids: string[]): Promise<number> {
    return ids.length === 0 ? 0 : runCount(this.pool, { name, text, values: [ids] });
  }
}
