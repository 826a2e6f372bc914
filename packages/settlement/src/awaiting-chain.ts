
/**
 * Thrown by the machine when a step awaits a transaction's outcome: the job is delayed (not failed, no
 * attempt counted) for at most `retryAfterMs`, and run again as soon as `known` resolves in this process.
 * The delay is the fallback for a process that dies meanwhile: any worker then takes the job up and waits anew.
 */
export class SettlementAwaitingChainError extends Error {
  constructor(
    readonly settlementId: string,
    readonly transactionId: string,
    readonly retryAfterMs: number,
    readonly known: Promise<void>,
  ) {
    super(`settlement ${settlementId} awaits the outcome of transaction ${transactionId}`);
    this.name = 'SettlementAwaitingChainError';
  }
}
