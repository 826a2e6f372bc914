import { addressSchema as address, uintStringSchema as uintString } from '@facilitator/core';
import type { X402Extension } from '../mechanism';
import { EIP2612_GAS_SPONSORING } from './eip2612';

/**
 * `eip2612GasSponsoring.info`: the payer's EIP-2612 permit letting Permit2 move the token, which the
 * facilitator submits with a Permit2 payment (`@x402/extensions`' schema, every field bounded). The server's
 * declaration, echoed by a client that signed none (`{ description, version }`), is no permit; a permit has
 * all its fields (`eip2612PermitOf` reads them).
 */
const eip2612GasSponsoringInfo = {
  type: 'object',
  properties: {
    from: { ...address, description: 'the payer: the permit owner' },
    asset: { ...address, description: 'the token' },
    spender: { ...address, description: 'Permit2' },
    amount: { ...uintString, description: "the allowance it sets: the Permit2 payment's permitted amount" },
    nonce: { ...uintString, description: "the owner's EIP-2612 nonce on the token" },
    deadline: { ...uintString, description: 'Unix seconds, the last second the token accepts it' },
    signature: { type: 'string', pattern: '^0x[0-9a-fA-F]{130}$', description: '65 bytes, 0x hex: r, s, v' },
    version: { type: 'string', maxLength: 16, pattern: '^[0-9]+(\\.[0-9]+)*$' },
    description: { type: 'string', maxLength: 1024 },
  },
  additionalProperties: true,
  if: {
    anyOf: [
      { required: ['from'] },
      { required: ['asset'] },
      { required: ['spender'] },
      { required: ['amount'] },
      { required: ['nonce'] },
      { required: ['deadline'] },
      { required: ['signature'] },
    ],
  },
  then: { required: ['from', 'asset', 'spender', 'amount', 'nonce', 'deadline', 'signature'] },
} as const;

/** x402's `eip2612GasSponsoring`, as the Permit2 mechanisms read it from a payment's extensions (`PaymentMechanism.x402.extensions`). */
export const EIP2612_GAS_SPONSORING_EXTENSION: X402Extension = { key: EIP2612_GAS_SPONSORING, infoSchema: eip2612GasSponsoringInfo };
