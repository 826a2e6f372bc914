/**
 * Building blocks shared by every request schema. Lengths are capped everywhere so that no field can
 * make validation, hashing or storage expensive.
 */
export const address = {
  type: 'string',
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: '20-byte address, 0x hex',
  examples: ['0x209693Bc6afc0C5328bA36FaF03C514EF312287C'],
} as const;

export const bytes32 = {
  type: 'string',
  pattern: '^0x[0-9a-fA-F]{64}$',
  description: '32 bytes, 0x hex',
} as const;

/** uint256 as a decimal string: at most 78 digits; the exact bound is checked when parsed. */
export const uintString = {
  type: 'string',
  pattern: '^(0|[1-9][0-9]{0,77})$',
  description: 'unsigned integer as a decimal string',
} as const;

export const signature = {
  type: 'string',
  pattern: '^0x([0-9a-fA-F]{2}){1,8192}$',
  description: 'signature, 0x hex: 65 bytes for an ECDSA key; longer for smart-contract wallets (ERC-1271)',
} as const;

export const authorization = {
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

export const exactEvmPayload = {
  type: 'object',
  required: ['authorization', 'signature'],
  properties: { authorization, signature },
  additionalProperties: false,
} as const;

export const shortString = { type: 'string', minLength: 1, maxLength: 128 } as const;
