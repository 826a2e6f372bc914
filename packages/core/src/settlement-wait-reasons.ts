/**
 * Why a settlement waits in its state instead of failing: the one list the worker writes, the status record
 * and its schema report, the metrics label, and the status page names. Adding a reason here is all it takes
 * for each of them (the settlement package's SettlementWaitReason is held to this list by the compiler).
 */
export const SETTLEMENT_WAIT_REASONS = [
  'gas_price_above_cap',
  'no_funded_relayer',
  'payer_funds_in_flight',
  'merchant_fees_in_flight',
  'treasury_busy',
  'atomic_path_not_ready',
  'fee_differs_from_executor',
  'execution_confirming',
] as const;

export type SettlementWaitReasonId = (typeof SETTLEMENT_WAIT_REASONS)[number];

/** Each reason as the status page shows it, and what it means for the API's documentation. */
export const SETTLEMENT_WAIT_REASON_TEXT: { readonly [R in SettlementWaitReasonId]: { label: string; meaning: string } } = {
  gas_price_above_cap: { label: 'Gas price above our cap', meaning: 'the base fee is above MAX_FEE_PER_GAS_GWEI_<chainId>' },
  no_funded_relayer: { label: 'No relayer with gas', meaning: 'every relayer is under RELAYER_MIN_BALANCE_<chainId>' },
  payer_funds_in_flight: {
    label: "Payer's other payments in flight",
    meaning: "the payer's other payments in flight use its balance, or a contract-wallet payer has CONTRACT_PAYER_MAX_IN_FLIGHT in flight",
  },
  merchant_fees_in_flight: {
    label: "Merchant's other fees in flight",
    meaning: "the merchant's allowance or balance covers this fee alone but not on top of its other fees in flight",
  },
  treasury_busy: { label: 'Treasury transaction pending', meaning: 'a delegated treasury has a transaction unmined: its fees go one at a time' },
  atomic_path_not_ready: {
    label: 'Settlement executor not set up',
    meaning: 'the settlement executor of the network is not set up and the worker holds no treasury key to settle sequentially',
  },
  fee_differs_from_executor: {
    label: "Fee differs from the executor's",
    meaning: "the settlement's fee, fixed when it was created, is not the one the network's executor takes, and the worker holds no treasury key to charge it sequentially",
  },
  execution_confirming: {
    label: 'Paid by another transaction, confirming',
    meaning: 'another transaction than ours executed the payment to the merchant; it is reported settled once that transaction has CONFIRMATIONS_<chainId>, as ours would',
  },
};

/** "a, b or c": the reasons named in a sentence (schema descriptions), each as `each` writes it. */
export function settlementWaitReasonList(each: (reason: SettlementWaitReasonId) => string = (reason) => reason): string {
  const all = SETTLEMENT_WAIT_REASONS.map(each);
  return `${all.slice(0, -1).join(', ')} or ${all[all.length - 1]}`;
}
