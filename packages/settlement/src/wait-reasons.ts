import type { SettlementWaitReasonId } from '@facilitator/core';

/** Why a settlement waits in its state instead of going on (shown on its status record). */
export const SettlementWaitReason = {
  /** the network's base fee is above MAX_FEE_PER_GAS_GWEI_<chainId>: nothing we sign could be included */
  GasAboveCap: 'gas_price_above_cap',
  /** every relayer's native balance is under RELAYER_MIN_BALANCE_<chainId>: none can pay for a transfer */
  NoFundedRelayer: 'no_funded_relayer',
  /**
   * the payer's other settlements in flight already use its balance (or, for a contract-wallet payer, its
   * turn): this one would fit alone, so it waits for them instead of being sent against money it may not have
   */
  PayerFundsInFlight: 'payer_funds_in_flight',
  /**
   * the merchant's allowance (or balance) covers this fee alone but not on top of its other fees in flight: it
   * waits for them (a fee already taken on chain still counts until its settlement records it)
   */
  MerchantFeesInFlight: 'merchant_fees_in_flight',
  /** a delegated (EIP-7702) treasury has a transaction unmined: geth-family pools hold one at a time */
  TreasuryBusy: 'treasury_busy',
  /**
   * the network's atomic path is not set up (no delegation, or one to another configuration) and this worker
   * holds no treasury key to settle sequentially: it waits for `executor setup`, within its authorization
   */
  AtomicPathNotReady: 'atomic_path_not_ready',
  /**
   * the settlement's own fee (stored when it was created) is not the fee this worker's executor takes, and
   * this worker holds no treasury key to charge it sequentially: it waits for a worker that can charge
   * exactly that fee (during a change of FEE_AMOUNT, one still configured with it), within its authorization
   */
  FeeDiffersFromExecutor: 'fee_differs_from_executor',
  /**
   * another transaction than ours executed the payment to the merchant (a front-run, the payer's wallet sending
   * it twice, a merchant failing over between facilitators): the settlement is settled on it once it has the
   * confirmations ours would need (CONFIRMATIONS_<chainId>), never at fewer
   */
  ExecutionConfirming: 'execution_confirming',
} as const;
export type SettlementWaitReason = (typeof SettlementWaitReason)[keyof typeof SettlementWaitReason];

// held to core's one list of wait reasons (the schema, metrics and status page read that one): a reason named
// here and not there, or there and not here, does not compile
const NO_REASON_UNLISTED: [Exclude<SettlementWaitReason, SettlementWaitReasonId>] extends [never] ? true : never = true;
const NO_REASON_UNNAMED: [Exclude<SettlementWaitReasonId, SettlementWaitReason>] extends [never] ? true : never = true;
void [NO_REASON_UNLISTED, NO_REASON_UNNAMED];

/** How long a waiting settlement's job stays delayed before it looks again. */
export const WAIT_RETRY_MS: Record<SettlementWaitReason, number> = {
  gas_price_above_cap: 2_000,
  no_funded_relayer: 5_000,
  payer_funds_in_flight: 1_000,
  merchant_fees_in_flight: 1_000,
  treasury_busy: 1_000,
  // the delegation is read again every EXECUTOR_RECHECK_MS (a minute by default)
  atomic_path_not_ready: 10_000,
  fee_differs_from_executor: 10_000,
  execution_confirming: 1_000,
};
