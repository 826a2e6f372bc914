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
 * A Permit2 payload of x402's (`@x402/evm`'s `ExactPermit2Payload` and upto's): a `PermitWitnessTransferFrom`
 * the payer signed under Permit2's domain for one of x402's proxies, with that proxy's witness.
 */
function permit2Payload<Witness extends Record<string, object>>(proxy: string, witness: Witness) {
  return {
    type: 'object',
    required: ['permit2Authorization', 'signature'],
    properties: {
      permit2Authorization: {
        type: 'object',
        description: `Permit2 PermitWitnessTransferFrom signed by the payer (spender: ${proxy})`,
        required: ['from', 'permitted', 'spender', 'nonce', 'deadline', 'witness'],
        properties: {
          from: { ...address, description: 'payer' },
          permitted: {
            type: 'object',
            required: ['token', 'amount'],
            properties: { token: address, amount: { ...uintString, description: "amount in the token's smallest unit" } },
            additionalProperties: false,
          },
          spender: { ...address, description: proxy },
          nonce: { ...uintString, description: "Permit2's unordered nonce of the payer (decimal)" },
          deadline: { ...uintString, description: 'Unix seconds, the last second it may be used' },
          witness: {
            type: 'object',
            required: Object.keys(witness) as Array<keyof Witness & string>,
            properties: witness,
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
      signature,
    },
    additionalProperties: false,
  } as const;
}

const recipient = { ...address, description: 'merchant; never the treasury' };
const validAfter = { ...uintString, description: 'Unix seconds' };

/** `exact` through Permit2: the witness binds the recipient and a start time. */
const exactPermit2Payload = permit2Payload("x402's exact Permit2 proxy", { to: recipient, validAfter });

/**
 * `upto` through Permit2: the permitted amount is the most the merchant may settle, and the witness also binds
 * the facilitator, the only address whose call the proxy accepts (`/x402/supported`'s `extra.facilitatorAddress`).
 */
const uptoPermit2Payload = permit2Payload("x402's upto Permit2 proxy", {
  to: recipient,
  facilitator: { ...address, description: "the facilitator that alone may settle it: this service's extra.facilitatorAddress" },
  validAfter,
});

/**
 * An x402 v2 payload: EIP-3009's, or Permit2's when it carries a `permit2Authorization` (as the reference tells
 * them apart), upto's when its witness names a facilitator. `if`/`then`/`else` keeps ajv's errors to the one
 * shape the client sent; the scheme then picks the mechanism, which refuses a shape of another scheme.
 */
export const x402V2Payload = {
  type: 'object',
  if: { type: 'object', required: ['permit2Authorization'] },
  then: {
    if: { type: 'object', properties: { permit2Authorization: { type: 'object', properties: { witness: { type: 'object', required: ['facilitator'] } } } } },
    then: uptoPermit2Payload,
    else: exactPermit2Payload,
  },
  else: exactEvmPayload,
} as const;

export const shortString = { type: 'string', minLength: 1, maxLength: 128 } as const;
