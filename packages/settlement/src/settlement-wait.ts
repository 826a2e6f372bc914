/** Why a settlement waits instead of acting; shown as `waiting.reason` on its status record. */
export type WaitReason = 'gas_price_above_cap' | 'no_funded_relayer';

/**
 * A step's "not now": nothing was sent, nothing is wrong with the payment, and the same step should run
 * again after `retryAfterMs`. The job handler persists the reason and delays the job without spending
 * one of its attempts (SETTLEMENT_MAX_ATTEMPTS counts failures, and waiting is not one).
 */
export class SettlementWait extends Error {
  constructor(
    readonly reason: WaitReason,
    readonly retryAfterMs: number,
    readonly details: Record<string, string> = {},
  ) {
    super(`settlement waits: ${reason}`);
    this.name = 'SettlementWait';
  }
}
