import { permit2PayloadMarker, permit2PayloadSchema, recipientSchema, validAfterSchema } from '../permit2/payload-schema';

/** `exact` through Permit2: the witness binds the recipient and a start time. */
export const exactPermit2PayloadSchema = permit2PayloadSchema("x402's exact Permit2 proxy", { to: recipientSchema, validAfter: validAfterSchema });

/** a `permit2Authorization` whose witness names no facilitator */
export const exactPermit2PayloadMarker = permit2PayloadMarker(false);
