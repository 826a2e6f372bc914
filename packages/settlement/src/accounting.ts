import type { FeeReverts } from '@facilitator/db';

/**
 * Who pays for failures (issue #22, "no free work"). A payment that passed every check and still failed on
 * chain cost our relayers gas (and, on the sequential path, the merchant a kept fee). Such failures are
 * counted per payer and per merchant within a window; past a small threshold the payer is paused everywhere
 * (it is the one whose code or balance made the items fail), and the merchant is paused only for payers
 * that never paid it: pausing an honest merchant for strangers' payments would itself be a denial of
 * service, while its known customers are not the flood.
 */
export interface FailurePausePolicy {
  payerAfterFailures: number;
  merchantAfterFailures: number;
  windowMs: number;
}

/** The counts the pause is decided on (a SettlementAccountingStore). */
export interface FailureCounts {
  /** the payer's and the merchant's costly failures since `since`, read together (one statement) */
  failuresOfPayment(payer: string, merchant: string, chainId: number, since: Date): Promise<{ payer: FeeReverts; merchant: FeeReverts }>;
  hasPaid(payer: string, merchant: string, chainId: number): Promise<boolean>;
}

interface FailurePause {
  who: 'payer' | 'merchant';
  until: Date;
  failures: number;
}

/** Whether this payer, or this merchant for this payer, is paused now; undefined when neither is. */
export async function failurePauseOf(
  counts: FailureCounts,
  policy: FailurePausePolicy,
  payment: { payer: string; merchant: string; chainId: number },
  nowMs = Date.now(),
): Promise<FailurePause | undefined> {
  const since = new Date(nowMs - policy.windowMs);
  const { payer: ofPayer, merchant: ofMerchant } = await counts.failuresOfPayment(payment.payer, payment.merchant, payment.chainId, since);
  const payerPause = pauseAfter(ofPayer, policy.payerAfterFailures, policy.windowMs);
  if (payerPause) return { who: 'payer', ...payerPause };
  const merchantPause = pauseAfter(ofMerchant, policy.merchantAfterFailures, policy.windowMs);
  // read only when it matters: a paused merchant still takes payments from payers that paid it before
  if (merchantPause && !(await counts.hasPaid(payment.payer, payment.merchant, payment.chainId))) return { who: 'merchant', ...merchantPause };
  return undefined;
}

function pauseAfter(failures: FeeReverts, threshold: number, windowMs: number): { until: Date; failures: number } | undefined {
  if (failures.count < threshold || !failures.lastAt) return undefined;
  return { until: new Date(failures.lastAt.getTime() + windowMs), failures: failures.count };
}

/**
 * What the worker's steps need of the failure accounting: the pause, the merchant's current minimum (checked
 * again before the fee), the cap on a contract-wallet payer's items in flight, and the treasury's unfinished
 * transactions (a delegated treasury sends its fees one at a time).
 */
export interface SettlementAccounting {
  pause: FailurePausePolicy;
  counts: FailureCounts;
  /**
   * the minimum payment the merchant accepts now: its own, else the service's MIN_PAYMENT_AMOUNT when set;
   * undefined: the settlement's own fee (what the API's default minimum was when it decided that fee)
   */
  minimumFor(merchant: string): Promise<bigint | undefined>;
  /** a contract-wallet payer's settlements in the sending states at once (CONTRACT_PAYER_MAX_IN_FLIGHT) */
  contractPayerMaxInFlight: number;
  /** `refuse`: a contract-wallet payer never takes the sequential path (SEQUENTIAL_CONTRACT_PAYERS) */
  sequentialContractPayers: 'refuse' | 'allow';
  /** transactions of `from` on the chain that may still be mined */
  unfinishedTransactionsOf(chainId: number, from: string): Promise<number>;
}
