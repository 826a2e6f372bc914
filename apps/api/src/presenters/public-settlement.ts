import type { Settlement } from '@facilitator/db';
import { isFinal, statusOf } from '@facilitator/settlement';
import { feeCollectionStatus } from './settlement';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * A settlement's status record for anyone who asks the public lookup (docs/decisions.md, "Public settlement
 * lookup"): only what the chain already shows or will show — the status (pending, settled, failed), the
 * reorg outcome, the transfer's parties, amount and nonce, and the hashes of transactions that were mined.
 * Not: our record ids (they open the full record), metadata, webhook URLs, error messages and details (a
 * merchant's allowance and balances, our internals), waiting reasons, processing states. A failure says
 * its error code only.
 */
export function publicSettlementRecord(s: Settlement) {
  const settled = s.state === 'settled';
  return {
    type: 'settlement',
    status: statusOf(s.state),
    network: `eip155:${s.chainId}`,
    transaction_hash: settled ? s.settlementTxHash : null,
    settled_at: iso(s.settledAt),
    details: {
      destination_address: s.merchant,
      payer_address: s.payer,
      nonce: s.nonce,
      amount: s.amount,
      settled_amount: settled ? s.amount : '0',
      fee_collection_status: feeCollectionStatus(s),
      // a fee transaction is named once it was mined (collected)
      fee_tx_hash: s.feeCollectedAt ? s.feeTxHash : null,
    },
    // once ended: its transactions watched for reorgs until FINALITY_DEPTH deep (watching, reorged, final, changed)
    finality: isFinal(s.state) ? { status: s.finality ?? 'watching', reorgs: s.reorgCount } : null,
    ...(s.state === 'failed' ? { error: { code: s.errorCode } } : {}),
  };
}

/** The lookup's answer: every settlement the key names (several for a batch transaction or retried payment). */
export function publicSettlementLookup(settlements: Settlement[]) {
  return { settlements: settlements.map(publicSettlementRecord) };
}
