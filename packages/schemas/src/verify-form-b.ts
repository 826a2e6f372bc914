import { address, bytes32, exactEvmPayload, shortString, uintString } from './primitives';

/** Spec "Legacy flat verify request" (Form B, x402Version 1). */
export const verifyFormBSchema = {
  $id: 'VerifyRequestFormB',
  title: 'Verify request, Form B (flat legacy form, x402Version 1)',
  type: 'object',
  required: ['transaction_hash', 'chain', 'seller_address', 'expected_amount', 'expected_token', 'metadata'],
  properties: {
    transaction_hash: { ...bytes32, description: 'the authorization nonce' },
    chain: { ...shortString, description: 'layer2 or layer2-sepolia (base and base-sepolia also accepted); another enabled registry network by its short name (polygon, polygon-amoy, arbitrum, arbitrum-sepolia, avalanche, avalanche-fuji, optimism, optimism-sepolia)' },
    seller_address: { ...address, description: 'merchant' },
    expected_amount: { ...uintString, description: 'smallest units' },
    expected_token: { ...address, description: 'token' },
    metadata: {
      type: 'object',
      required: ['paymentPayload'],
      properties: {
        source: { type: 'string', maxLength: 256 },
        paymentPayload: {
          type: 'object',
          required: ['x402Version', 'scheme', 'network', 'payload'],
          properties: {
            x402Version: { const: 1 },
            scheme: { const: 'exact' },
            network: shortString,
            payload: exactEvmPayload,
          },
          additionalProperties: false,
        },
      },
      additionalProperties: true,
    },
    webhook_url: { type: 'string', maxLength: 2048, description: 'HTTPS URL for event delivery' },
  },
  additionalProperties: false,
} as const;

export const settleFormBSchema = {
  $id: 'SettleRequestFormB',
  title: 'Settle request, Form B',
  type: 'object',
  required: ['verification_id', 'destination_address'],
  properties: {
    verification_id: { type: 'string', minLength: 1, maxLength: 64 },
    destination_address: { ...address, description: 'must be the verified merchant' },
  },
  additionalProperties: false,
} as const;
