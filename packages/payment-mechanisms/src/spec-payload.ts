import { exactEip3009PayloadSchema } from './exact-eip3009/payload-schema';

/**
 * The payload the facilitator spec's own request forms carry (/v1 Form A and Form B): `exact` through the one
 * mechanism the spec names, `{ authorization, signature }`. Typed as written, so the request schemas derive
 * their body types from it; x402 requests compose theirs from the registry (`PaymentMechanism.payloadSchema`).
 */
export const SPEC_PAYLOAD_SCHEMA = exactEip3009PayloadSchema;
