import { dateColumn, runCount, runQuery } from '../pg-query';
import type { RetentionCursor, RetentionPage } from '../retention-page';
import { SettlementTable, type SettlementRow } from './settlement-table';

// Retention (docs/decisions.md, "Retention"): failed settlements that moved no money (no fee collected,
// the merchant not paid) and wait for no operator, failed before $1, oldest first after the cursor; the
// partial index on (updated_at) of exactly those keeps the walk to them. Settled ones, and failed ones
// that moved money, are the merchant's record and are kept.
const FAILED_PAGE = `
  SELECT id, updated_at FROM settlements
   WHERE state = 'failed' AND fee_collected_at IS NULL AND merchant_paid = false AND updated_at < $1
     AND updated_at >= $2 AND (updated_at > $2 OR id > $3) AND attention_at IS NULL
     AND NOT (coalesce(error_details, '{}'::jsonb) ? 'authorization_used_by')
   ORDER BY updated_at, id LIMIT $4`;

// Their history with them; checked again as it deletes. Their webhook events and batch items go first
// (WebhookEventRepository, SettlementBatchRepository): one left keeps the settlement.
const DELETE_FAILED = `
  WITH doomed AS (
    SELECT s.id FROM settlements s
     WHERE s.id = ANY($1::text[]) AND s.state = 'failed' AND s.fee_collected_at IS NULL AND s.merchant_paid = false
       AND s.attention_at IS NULL
       -- the payment was made by someone else's transaction: the merchant was paid, the record stays
       AND NOT (coalesce(s.error_details, '{}'::jsonb) ? 'authorization_used_by')
       AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.settlement_id = s.id)
       AND NOT EXISTS (SELECT 1 FROM settlement_batch_items i WHERE i.settlement_id = s.id)
  ), history AS (
    DELETE FROM settlement_transitions t USING doomed d WHERE t.settlement_id = d.id
  )
  DELETE FROM settlements s USING doomed d WHERE s.id = d.id`;

/** Retention and the sweeper: failed settlements that moved no money, and settlements whose job may be lost. */
export class SettlementRetention extends SettlementTable {
  /** Retention: a page of failed settlements that moved no money, failed before `before` (see FAILED_PAGE). */
  async failedPage(before: Date, after: RetentionCursor, limit: number): Promise<RetentionPage> {
    const rows = await runQuery(this.pool, { name: 'settlement_failed_page', text: FAILED_PAGE, values: [before, after.at, after.id, limit] });
    const last = rows.at(-1);
    return {
      ids: rows.map((r) => r.id as string),
      next: rows.length < limit || !last ? null : { at: dateColumn(last.updated_at), id: last.id as string },
    };
  }

  /** Retention: deletes those of `ids` that are still deletable (DELETE_FAILED), with their history; returns how many went. */
  async deleteFailed(ids: string[]): Promise<number> {
    return ids.length === 0 ? 0 : runCount(this.pool, { name: 'settlement_delete_failed', text: DELETE_FAILED, values: [ids] });
  }

  /** Settlements that are not final and have not moved for a while: their jobs may be lost. */
  findStale(olderThan: Date, limit: number): Promise<SettlementRow[]> {
    return this.prisma.settlement.findMany({
      // a parked settlement waits for an operator, not for the sweeper
      where: { state: { notIn: ['settled', 'failed'] }, updatedAt: { lt: olderThan }, attentionAt: null },
      orderBy: { updatedAt: 'asc' },
      take: limit,
    });
  }
}
