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
