/**
 * JSON-schema atoms of the fields a signed payment carries: what the request schemas (`@facilitator/schemas`)
 * and each payment mechanism's payload schema (`@facilitator/payment-mechanisms`) are built of. They live
 * here, below both, so a mechanism owns its payload's schema without importing the request schemas.
 * Lengths are capped everywhere so that no field can make validation, hashing or storage expensive.
 */
export const addressSchema = {
  type: 'string',
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: '20-byte address, 0x hex',
  examples: ['0x209693Bc6afc0C5328bA36FaF03C514EF312287C'],
} as const;

export const bytes32Schema = {
  type: 'string',
  pattern: '^0x[0-9a-fA-F]{64}$',
  description: '32 bytes, 0x hex',
} as const;

/** uint256 as a decimal string: at most 78 digits; the exact bound is checked when parsed. */
export const uintStringSchema = {
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

export const signatureSchema = {
  type: 'string',
  // the length first, as its own keyword: its message ("must NOT have more than 8194 characters") says why
  maxLength: 2 + 2 * MAX_SIGNATURE_BYTES,
  pattern: '^0x([0-9a-fA-F]{2})+$',
  description: `signature, 0x hex: 65 bytes for an ECDSA key; longer for smart-contract wallets (ERC-1271, ERC-6492), at most ${MAX_SIGNATURE_BYTES} bytes`,
} as const;
