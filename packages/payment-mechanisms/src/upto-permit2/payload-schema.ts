import { addressSchema } from '@facilitator/core';
import { permit2PayloadMarker, permit2PayloadSchema, recipientSchema, validAfterSchema } from '../permit2/payload-schema';

/**
 * `upto` through Permit2: the permitted amount is the most the merchant may settle, and the witness also binds
 * the facilitator, the only address whose call the proxy accepts (`/x402/supported`'s `extra.facilitatorAddress`).
 */
export const uptoPermit2PayloadSchema = permit2PayloadSchema("x402's upto Permit2 proxy", {
  to: recipientSchema,
  facilitator: { ...addressSchema, description: "the facilitator that alone may settle it: this service's extra.facilitatorAddress" },
  validAfter: validAfterSchema,
});

/** a `permit2Authorization` whose witness names a facilitator */
export const uptoPermit2PayloadMarker = permit2PayloadMarker(true);
