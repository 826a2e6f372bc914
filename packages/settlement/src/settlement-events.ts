import type { Settlement } from '@facilitator/db';
import { WebhookEventType, type NewWebhookEvent } from '@facilitator/webhooks';

/** settlement.completed / settlement.rejected for a settlement that just reached its final state. */
export function finalSettlementEvent(settlement: Settlement, url: string): NewWebhookEvent {
  const settled = settlement.state === 'settled';
  return {
    type: settled ? WebhookEventType.SettlementCompleted : WebhookEventType.SettlementRejected,
    url,
    verificationId: settlement.verificationId,
    settlementId: settlement.id,
    merchant: settlement.merchant,
    status: settlement.state,
    data: {
      settlement_tx_hash: settled ? settlement.settlementTxHash : null,
      settled_amount: settled ? settlement.amount : '0',
      // the fee taken for this settlement; a failure after the fee keeps it
      fee: settlement.feeTxHash && settlement.feeCollectedAt ? settlement.feeAmount : '0',
      fee_tx_hash: settlement.feeCollectedAt ? settlement.feeTxHash : null,
      ...(settled ? {} : { error: { code: settlement.errorCode, message: settlement.errorMessage } }),
    },
  };
}

/** What a reorg changed of a settlement's transaction: the event payload's `data.change`. */
export interface ReorgChange {
  purpose: string;
  tx_hash: string;
  /** what was reported when it was first mined */
  reported: 'confirmed' | 'reverted';
  /** what the chain has now: mined with the other outcome, or never to be mined (its nonce went to another transaction) */
  now: 'confirmed' | 'reverted' | 'lost';
  block_before_reorg: number | null;
  /**
   * a `settle` transaction (an executor batch) serves several settlements, and it can succeed while one of
   * its items fails inside it: this settlement's own part, as reported and as the chain has it now
   */
  item?: { reported: SettlementMoney; now: SettlementMoney & { reason?: string; paid_by_tx?: string } };
}

/** What a settlement moved: the merchant's payment and the fee. */
export interface SettlementMoney {
  merchant_paid: boolean;
  fee_collected: boolean;
}

/** settlement.reorged: the outcome of a settlement's transaction changed after a reorg. */
export function reorgEvent(settlement: Settlement, url: string, change: ReorgChange): NewWebhookEvent {
  return {
    type: WebhookEventType.SettlementReorged,
    url,
    verificationId: settlement.verificationId,
    settlementId: settlement.id,
    merchant: settlement.merchant,
    status: 'changed',
    data: {
      state: settlement.state,
      change,
      // the merchant's money as the chain has it now
      ...(change.item
        ? { merchant_paid: change.item.now.merchant_paid, fee_collected: change.item.now.fee_collected }
        : {
            merchant_paid: change.purpose === 'transfer' ? change.now === 'confirmed' : settlement.merchantPaid,
            fee_collected: change.purpose === 'fee' ? change.now === 'confirmed' : settlement.feeCollectedAt !== null,
          }),
    },
  };
}
