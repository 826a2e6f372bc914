import { runQuery } from '../pg-query';
import { settlementFromColumns, type ForeignExecutionBlock } from '../settlement-row';
import { WebhookEventRepository, type WebhookEventRow } from '../webhook-event-repository';
import { SettlementTable, type SettlementRow } from './settlement-table';

/** A foreign execution the finality watcher watches (see foreignExecutionsAwaitingFinality). */
export interface ForeignExecutionWatch extends ForeignExecutionBlock {
  settlementId: string;
}

/** The finality watcher's: what became of ended settlements' transactions, and payments someone else executed. */
export class SettlementFinalityStore extends SettlementTable {
  /**
   * What became of a settlement's transactions after it ended (reorg watching): its `finality` (a
   * `changed` one stays so: what the merchant was told last is that the outcome changed), a reorg
   * counted, and a history row with `note` (from and to its unchanged state), and the event made from the
   * updated row stored in the same database transaction. Null when there is no such settlement.
   * `merchantPaid`: what the merchant is told now of its payment, when a change tells it (the next reorg is
   * judged against it).
   */
  async recordFinality(
    id: string,
    update: { finality?: string; reorg?: boolean; note: Record<string, unknown>; merchantPaid?: boolean },
    event?: (row: SettlementRow) => WebhookEventRow | undefined,
  ): Promise<SettlementRow | null> {
    return this.inTransaction(async (client) => {
      const rows = await runQuery(client, {
        name: 'settlement_record_finality',
        text: `
          WITH updated AS (
            UPDATE settlements
               SET finality = CASE WHEN finality = 'changed' THEN finality ELSE COALESCE($2, finality) END,
                   reorg_count = reorg_count + $3, merchant_paid = COALESCE($5, merchant_paid), updated_at = now()
             WHERE id = $1 RETURNING *
          ), history AS (
            INSERT INTO settlement_transitions (settlement_id, from_state, to_state, note) SELECT id, state, state, $4::jsonb FROM updated
          )
          SELECT * FROM updated`,
        values: [id, update.finality ?? null, update.reorg ? 1 : 0, JSON.stringify(update.note), update.merchantPaid ?? null],
      });
      if (rows.length === 0) return null;
      const row = settlementFromColumns(rows[0]);
      const stored = event?.(row);
      if (stored) await WebhookEventRepository.insertWith(client, stored);
      return row;
    });
  }

  /**
   * Settled settlements whose payment another transaction than their own executed, not FINALITY_DEPTH deep yet,
   * of one network (the finality watcher's; a settlement told its outcome changed is no longer watched).
   */
  async foreignExecutionsAwaitingFinality(chainId: number, limit: number): Promise<ForeignExecutionWatch[]> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_foreign_awaiting_finality',
      text: `
        SELECT f.settlement_id, f.tx_hash, f.block_number, f.block_hash
          FROM settlement_foreign_executions f JOIN settlements s ON s.id = f.settlement_id
         WHERE f.chain_id = $1 AND f.final_at IS NULL AND s.state = 'settled' AND s.finality IS DISTINCT FROM 'changed'
         ORDER BY f.block_number LIMIT $2`,
      values: [chainId, limit],
    });
    return rows.map((r) => ({ settlementId: r.settlement_id as string, txHash: r.tx_hash as string, blockNumber: Number(r.block_number), blockHash: r.block_hash as string }));
  }

  /** The foreign execution is FINALITY_DEPTH deep: no longer watched. */
  async markForeignExecutionFinal(settlementId: string): Promise<void> {
    await runQuery(this.pool, {
      name: 'settlement_foreign_mark_final',
      text: `UPDATE settlement_foreign_executions SET final_at = now(), updated_at = now() WHERE settlement_id = $1 AND final_at IS NULL`,
      values: [settlementId],
    });
  }

  /**
   * After a reorg, the payment's execution is found in another block, or in another transaction: watched there
   * from now on; the settlement's transaction hash follows it (what the merchant is told paid it).
   */
  async moveForeignExecution(settlementId: string, to: ForeignExecutionBlock): Promise<void> {
    await runQuery(this.pool, {
      name: 'settlement_foreign_move',
      text: `
        WITH watched AS (
          UPDATE settlement_foreign_executions SET tx_hash = $2, block_number = $3, block_hash = $4, updated_at = now()
           WHERE settlement_id = $1 RETURNING settlement_id)
        UPDATE settlements SET settlement_tx_hash = $2, updated_at = now() WHERE id IN (SELECT settlement_id FROM watched)`,
      values: [settlementId, to.txHash, to.blockNumber, to.blockHash],
    });
  }

  /**
   * Ended settlements none of whose mined transactions is still watched become `final` (those that never
   * mined one included; one whose outcome changed keeps `changed`). Returns how many. The partial index
   * on unfinished finality keeps this to the settlements that ended lately.
   */
  async markFinalWhereSettled(): Promise<number> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_mark_final',
      text: `
        UPDATE settlements s SET finality = 'final', updated_at = now()
         WHERE (s.finality IS NULL OR s.finality = 'reorged') AND s.state IN ('settled', 'failed')
           -- a transaction someone else sent that settled it is watched too (settlement_foreign_executions)
           AND NOT EXISTS (SELECT 1 FROM settlement_foreign_executions f WHERE f.settlement_id = s.id AND f.final_at IS NULL)
           AND NOT EXISTS (SELECT 1 FROM chain_transactions t
                            WHERE t.final_at IS NULL AND t.status IN ('confirmed', 'reverted')
                              AND (t.settlement_id = s.id
                                   -- an atomic settlement's transaction is its batch's
                                   OR t.settlement_id = (SELECT i.batch_id FROM settlement_batch_items i WHERE i.settlement_id = s.id)))
        RETURNING s.id`,
      values: [],
    });
    return rows.length;
  }
}
