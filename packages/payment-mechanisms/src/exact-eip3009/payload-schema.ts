import { addressSchema as address, bytes32Schema as bytes32, signatureSchema as signature, uintStringSchema as uintString } from '@facilitator/core';

/** The EIP-3009 `TransferWithAuthorization` message as a payload carries it (`parse` reads what it let through). */
export const authorizationSchema = {
  type: 'object',
  description: 'EIP-3009 TransferWithAuthorization message signed by the payer',
  required: ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'],
  properties: {
    from: { ...address, description: 'payer' },
    to: { ...address, description: 'merchant; never the treasury' },
    value: { ...uintString, description: "amount in the token's smallest unit" },
    validAfter: { ...uintString, description: 'Unix seconds' },
    validBefore: { ...uintString, description: 'Unix seconds, expiry' },
    nonce: { ...bytes32, description: '32 random bytes, unique per payment' },
  },
  additionalProperties: false,
} as const;

/**
 * An `exact` payload through EIP-3009 (x402's `ExactEvmPayload`): the authorization and the payer's signature.
 * It has no marker: a payload carrying no other mechanism's marker is EIP-3009's, as the reference reads it.
 */
export const exactEip3009PayloadSchema = {
  type: 'object',
  required: ['authorization', 'signature'],
  properties: { authorization: authorizationSchema, signature },
  additionalProperties: false,
} as const;
