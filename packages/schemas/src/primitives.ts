import { SPEC_PAYLOAD_SCHEMA } from '@facilitator/payment-mechanisms';
import { x402PayloadSchema } from './mechanism-payloads';

/**
 * Building blocks shared by every request schema. Lengths are capped everywhere so that no field can
 * make validation, hashing or storage expensive. The atoms of a signed payment's fields live in core, beside
 * the payment mechanisms that build their payload schemas of them.
 */
export {
  addressSchema as address,
  bytes32Schema as bytes32,
  uintStringSchema as uintString,
  signatureSchema as signature,
  MAX_SIGNATURE_BYTES,
} from '@facilitator/core';

/** The payload of the spec's own forms (/v1 Form A and Form B, x402's `ExactEvmPayload`), and its signed message. */
export const exactEvmPayload = SPEC_PAYLOAD_SCHEMA;
export const authorization = SPEC_PAYLOAD_SCHEMA.properties.authorization;

/** An x402 v2 payload, composed from the registered mechanisms' payload schemas. */
export const x402V2Payload = x402PayloadSchema(2);
/** An x402 v1 payload, likewise (x402 v1 knows one mechanism). */
export const x402V1Payload = x402PayloadSchema(1);

export const shortString = { type: 'string', minLength: 1, maxLength: 128 } as const;
