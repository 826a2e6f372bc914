/**
 * Whether the payment paid its merchant cannot be told from the chain: its nonce is spent and a transfer to
 * its payee may be its execution without saying whose it is (for Permit2: a contract called x402's proxy,
 * and no trace tells which nonce it spent), or our own transaction succeeded and its logs show less than
 * the amount moved. The merchant may or may not have been paid, so neither may be reported: the settlement
 * is parked for an operator whatever its state (SettlementMachine.giveUp), never ended as failed with the
 * fee kept, never as settled.
 */
export class PaymentOutcomeUnknownError extends Error {
  constructor(settlementId: string, why: string) {
    super(`settlement ${settlementId}: whether its payment paid the merchant is unknown: ${why}`);
    this.name = 'PaymentOutcomeUnknownError';
  }
}
