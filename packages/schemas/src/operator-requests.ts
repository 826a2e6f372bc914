import { bytes32 } from './primitives';

/** POST /v1/settlements/{id}/resolve: an operator's verdict on a settlement parked for attention. */
export const resolveSettlementSchema = {
  $id: 'ResolveSettlementRequest',
  title: 'Resolve a parked settlement (operator)',
  type: 'object',
  required: ['outcome', 'note'],
  properties: {
    outcome: { enum: ['settled', 'failed'], description: 'what the operator found on chain' },
    note: { type: 'string', minLength: 1, maxLength: 1000 },
    tx_hash: { ...bytes32, description: 'the transfer that paid the merchant (outcome settled)' },
  },
  additionalProperties: false,
} as const;

export interface ResolveSettlementRequest {
  outcome: 'settled' | 'failed';
  note: string;
  tx_hash?: string;
}
