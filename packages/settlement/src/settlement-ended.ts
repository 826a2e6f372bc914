/**
 * Thrown to a step that was about to send something of a settlement that is final already: a settle
 * request stopped it before anything was sent (see UnsentSettlementStop). Nothing was or will be sent;
 * the machine reads the settlement again and finds it final.
 */
export class SettlementEndedError extends Error {
  constructor(readonly settlementId: string) {
    super(`settlement ${settlementId} ended before anything of it was sent`);
    this.name = 'SettlementEndedError';
  }
}
