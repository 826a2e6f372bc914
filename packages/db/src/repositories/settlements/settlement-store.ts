import type { Pool, PoolClient } from 'pg';
import type { SettlementState } from '../../generated/prisma/client';
import { runQuery } from '../pg-query';
import { settlementFromColumns } from '../settlement-row';
import { WebhookEventRepository } from '../webhook-event-repository';
import { reservingTransitionStatement, type FeeReservationRequest, type PayerInFlight } from './fee-reservation-statement';
import type { FeeReverts } from './settlement-accounting-store';
import { SettlementTable, type SettlementRow } from './settlement-table';
import { transitionStatement, type TransitionRequest } from './transition-statement';

// ordered locks, so two claims of overlapping sets cannot deadlock
const CLAIM_SEND = `
  UPDATE settlements s SET send_claimed_at = coalesce(s.send_claimed_at, now())
    FROM (SELECT id FROM settlements WHERE id = ANY($1::text[]) AND state NOT IN ('settled', 'failed') ORDER BY id FOR UPDATE) locked
   WHERE s.id = locked.id AND s.state NOT IN ('settled', 'failed')
  RETURNING s.id`;

/** The worker's side of transfer_decision: it may sign the transfer unless a settle request withheld it first. */
const CLAIM_TRANSFER = `
  UPDATE settlements SET transfer_decision = 'send'
   WHERE id = $1 AND transfer_decision IS DISTINCT FROM 'withheld' AND state NOT IN ('settled', 'failed')
  RETURNING id`;

// a fee transfer that was sent and reverted: failed with fee_collection_failed and a fee hash
// ...and its settlements settled on someone else's transaction after ours was sent (the transition's note names
// our_tx_hash) with no fee of ours: a merchant front-running our batch spends our gas and pays no fee, however
// often it does. Read from settlement_foreign_executions (rare rows) by its (chain_id, created_at) index.
const FEE_REVERTS_OF_MERCHANT = `
  SELECT count(*)::int AS reverts, max(at) AS last_at FROM (
    SELECT updated_at AS at FROM settlements
     WHERE merchant = $1 AND chain_id = $2 AND state = 'failed' AND error_code = 'fee_collection_failed'
       AND fee_tx_hash IS NOT NULL AND updated_at > $3
    UNION ALL
    SELECT f.created_at AS at FROM settlement_foreign_executions f JOIN settlements s ON s.id = f.settlement_id
     WHERE f.chain_id = $2 AND f.created_at > $3 AND s.merchant = $1 AND s.fee_collected_at IS NULL
       AND EXISTS (SELECT 1 FROM settlement_transitions t WHERE t.settlement_id = s.id AND t.to_state = 'settled' AND t.note ? 'our_tx_hash')
  ) spent`;

/** The settlement machine's store: it claims, moves, parks and waits settlements (the worker's hot path). */
export class SettlementStore extends SettlementTable {
  /**
   * The worker commits to sending something of this settlement (its fee, or its item of a batch): false
   * when it is final already, i.e. a settle request stopped it before anything was sent. Row-locked like
   * the stop (transition with onlyUnclaimed), so exactly one of the two wins.
   */
  async claimSend(id: string): Promise<boolean> {
    return (await SettlementStore.claimSendWith(this.pool, [id])).length === 1;
  }

  /**
   * The worker commits to signing a sequential x402 settlement's transfer: false when a settle request withheld
   * it first (answered failed; it must never be sent). Row-locked like withholdTransfer, so one of the two wins.
   */
  async claimTransfer(id: string): Promise<boolean> {
    return (await runQuery(this.pool, { name: 'settlements_claim_transfer', text: CLAIM_TRANSFER, values: [id] })).length === 1;
  }

  /** claimSend for several settlements inside a caller's transaction (a batch and its items): the ids claimed. */
  static async claimSendWith(client: Pool | PoolClient, ids: readonly string[]): Promise<string[]> {
    const rows = await runQuery(client, { name: 'settlements_claim_send', text: CLAIM_SEND, values: [ids] });
    return rows.map((r) => r.id as string);
  }

  /**
   * Moves a settlement from one state to the next, with its history row, atomically and only if it is
   * still in `from` (so two workers can never both advance it). Returns the moved settlement, or null when
   * it had moved on.
   */
  async transition(request: TransitionRequest): Promise<SettlementRow | null> {
    const statement = transitionStatement(request);
    if (!request.event) {
      const rows = await runQuery(this.pool, statement);
      return rows.length > 0 ? settlementFromColumns(rows[0]) : null;
    }
    return this.inTransaction(async (client) => {
      const rows = await runQuery(client, statement);
      if (rows.length === 0) return null;
      const moved = settlementFromColumns(rows[0]);
      const event = request.event!(moved);
      if (event) await WebhookEventRepository.insertWith(client, event);
      return moved;
    });
  }

  /**
   * The check_allowance -> collect_fee transition, taken only when the merchant's allowance and balance
   * cover this fee on top of every fee already in flight for it. Serialized per merchant by a transaction
   * advisory lock, so concurrent workers (any process) never reserve more than the merchant can pay; one
   * statement (see reservingTransitionStatement).
   */
  async transitionReservingFee(
    request: TransitionRequest,
    reservation: FeeReservationRequest,
  ): Promise<{ moved: SettlementRow | null; inFlight: bigint; payer?: PayerInFlight }> {
    const [row] = await runQuery(this.pool, reservingTransitionStatement(request, reservation));
    const inFlight = BigInt(row.reservation_in_flight as string);
    const payer = reservation.payer
      ? {
          value: BigInt(row.payer_in_flight as string),
          items: row.payer_items as number,
          failures: row.payer_failures as number,
          lastFailureAt: row.payer_last_failure_at == null ? null : new Date(row.payer_last_failure_at as string),
        }
      : undefined;
    return { moved: row.id == null ? null : settlementFromColumns(row), inFlight, ...(payer ? { payer } : {}) };
  }

  /** Fee transfers of this merchant that were sent and reverted since `since`. */
  async feeRevertsOfMerchant(merchant: string, chainId: number, since: Date): Promise<FeeReverts> {
    const [row] = await runQuery(this.pool, { name: 'fee_reverts_of_merchant', text: FEE_REVERTS_OF_MERCHANT, values: [merchant, chainId, since] });
    return { count: row.reverts as number, lastAt: row.last_at == null ? null : new Date(row.last_at as string) };
  }

  /**
   * The settlement waits in `state` for the chain (see SettlementWaitReason): the reason and its detail
   * are shown on its status record; `since` keeps the start of the wait. False when it left that state.
   */
  async markWaiting(id: string, state: SettlementState, reason: string, detail: object): Promise<boolean> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_mark_waiting',
      text: `UPDATE settlements
                SET waiting_since = CASE WHEN waiting_reason = $3 THEN waiting_since ELSE now() END,
                    updated_at = CASE WHEN waiting_reason = $3 THEN updated_at ELSE now() END,
                    waiting_reason = $3, waiting_detail = $4::jsonb
              WHERE id = $1 AND state = $2::"SettlementState" RETURNING id`,
      values: [id, state, reason, JSON.stringify(detail)],
    });
    return rows.length > 0;
  }

  /** Parks a settlement for an operator: its job ran out of attempts while the money state is unknown. */
  async markNeedsAttention(id: string, reason: string): Promise<void> {
    await this.prisma.settlement.update({ where: { id }, data: { attentionReason: reason.slice(0, 1000), attentionAt: new Date() } });
  }

  /** Takes a settlement off the attention list (an operator retries it, or it reached a final state). */
  async clearAttention(id: string): Promise<SettlementRow | null> {
    const { count } = await this.prisma.settlement.updateMany({ where: { id }, data: { attentionReason: null, attentionAt: null } });
    return count > 0 ? this.findById(id) : null;
  }
}
