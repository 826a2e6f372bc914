import { addressSchema as address, signatureSchema as signature, uintStringSchema as uintString } from '@facilitator/core';

/**
 * A Permit2 payload of x402's (`@x402/evm`'s `ExactPermit2Payload` and upto's): a `PermitWitnessTransferFrom`
 * the payer signed under Permit2's domain for one of x402's proxies, with that proxy's witness.
 */
export function permit2PayloadSchema<Witness extends Record<string, object>>(proxy: string, witness: Witness) {
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

/** The witness fields both of x402's proxies bind: the recipient and the first second the payment may move. */
export const recipientSchema = { ...address, description: 'merchant; never the treasury' };
export const validAfterSchema = { ...uintString, description: 'Unix seconds' };

/**
 * Its `permit2Authorization` names a facilitator in its witness, or is an object without a witness yet: upto's
 * shape. What tells x402's two Permit2 payloads apart (the reference reads `witness.facilitator`), so that the
 * schema's errors are those of the one the client meant.
 */
const witnessNamesFacilitator = {
  type: 'object',
  properties: { permit2Authorization: { type: 'object', properties: { witness: { type: 'object', required: ['facilitator'] } } } },
} as const;

/**
 * The marker of a Permit2 payload (`PaymentMechanism.payloadMarker`): it carries a `permit2Authorization` (as
 * the reference tells Permit2 from EIP-3009), and its witness names a facilitator (upto) or not (exact). The
 * two markers never both hold.
 */
export function permit2PayloadMarker(namesFacilitator: boolean): object {
  const permit2 = { type: 'object', required: ['permit2Authorization'] } as const;
  return namesFacilitator ? { ...permit2, properties: witnessNamesFacilitator.properties } : { ...permit2, not: witnessNamesFacilitator };
}
