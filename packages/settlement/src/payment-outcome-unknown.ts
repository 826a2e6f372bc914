/**
 * The chain shows the payment's nonce spent, and a transfer to its payee that may be its execution without
 * saying whose it is (for Permit2: a contract called x402's proxy, and no trace tells which nonce it spent).
 * The merchant may or may not have been paid, so neither may be reported: the settlement is parked for an
 * operator whatever its state (SettlementMachine.giveUp), never ended as failed with the fee kept.
 */
export class PaymentOutcomeUnknownError extends Error {
  constructor(settlementId: string, why: string) {
    super(`settlement ${settlementId}: its payment's nonce is spent on chain and whether that paid the merchant is unknown: ${why}`);
    this.name = 'PaymentOutcomeUnknownError';
  }
}
