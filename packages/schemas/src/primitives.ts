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

/**
 * The longest signature taken, in bytes. A contract wallet's signature is calldata our relayers pay for
 * (16 gas a byte): 4,096 bytes cost at most ~65k gas, which every gas envelope counts. Real signatures are
 * far shorter (docs/decisions.md, "Untrusted contract-wallet payers"): 65 bytes for ECDSA, ~800 for a
 * one-owner Safe wrapped in ERC-6492 (measured in test/smart-wallet-payers.e2e.test.ts), ~1.2 KB for a
 * Coinbase Smart Wallet passkey signature wrapped in ERC-6492, ~1.8 KB for a ten-owner Safe's.
 */
export const MAX_SIGNATURE_BYTES = 4096;

export const signature = {
  type: 'string',
  // the length first, as its own keyword: its message ("must NOT have more than 8194 characters") says why
  maxLength: 2 + 2 * MAX_SIGNATURE_BYTES,
  pattern: '^0x([0-9a-fA-F]{2})+$',
  description: `signature, 0x hex: 65 bytes for an ECDSA key; longer for smart-contract wallets (ERC-1271, ERC-6492), at most ${MAX_SIGNATURE_BYTES} bytes`,
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

/**
 * `exact` through Permit2 (`@x402/evm`'s `ExactPermit2Payload`): a `PermitWitnessTransferFrom` the payer
 * signed under Permit2's domain for x402's exact proxy, the witness binding the recipient and a start time.
 */
export const exactPermit2Payload = {
  type: 'object',
  required: ['permit2Authorization', 'signature'],
  properties: {
    permit2Authorization: {
      type: 'object',
      description: "Permit2 PermitWitnessTransferFrom signed by the payer (spender: x402's exact Permit2 proxy)",
      required: ['from', 'permitted', 'spender', 'nonce', 'deadline', 'witness'],
      properties: {
        from: { ...address, description: 'payer' },
        permitted: {
          type: 'object',
          required: ['token', 'amount'],
          properties: { token: address, amount: { ...uintString, description: "amount in the token's smallest unit" } },
          additionalProperties: false,
        },
        spender: { ...address, description: "x402's exact Permit2 proxy" },
        nonce: { ...uintString, description: "Permit2's unordered nonce of the payer (decimal)" },
        deadline: { ...uintString, description: 'Unix seconds, the last second it may be used' },
        witness: {
          type: 'object',
          required: ['to', 'validAfter'],
          properties: { to: { ...address, description: 'merchant; never the treasury' }, validAfter: { ...uintString, description: 'Unix seconds' } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    signature,
  },
  additionalProperties: false,
} as const;

/**
 * An x402 v2 `exact` payload: EIP-3009's, or Permit2's when it carries a `permit2Authorization` (as the
 * reference tells them apart). `if`/`then`/`else` keeps ajv's errors to the one shape the client sent.
 */
export const x402ExactPayload = {
  type: 'object',
  if: { type: 'object', required: ['permit2Authorization'] },
  then: exactPermit2Payload,
  else: exactEvmPayload,
} as const;

export const shortString = { type: 'string', minLength: 1, maxLength: 128 } as const;
