/** The spec's event types. */
export const WebhookEventType = {
  VerificationCompleted: 'verification.completed',
  VerificationFailed: 'verification.failed',
  SettlementCompleted: 'settlement.completed',
  SettlementRejected: 'settlement.rejected',
  /** ours: after a reorg, the chain's outcome of a settled settlement's transaction is not what was reported */
  SettlementReorged: 'settlement.reorged',
} as const;

export type WebhookEventType = (typeof WebhookEventType)[keyof typeof WebhookEventType];

/** The delivered body, less `signature` (added at delivery, computed over everything else). */
export interface WebhookPayload {
  event_type: WebhookEventType;
  event_id: string;
  timestamp: string;
  verification_id: string;
  settlement_id: string | null;
  /** the payment's payTo (lowercase): whose secret signs the event */
  merchant_address: string;
  status: string;
  data: Record<string, unknown>;
}
