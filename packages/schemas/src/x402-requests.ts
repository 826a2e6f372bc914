import { compileValidator } from './validator';
import { paymentExtensionsSchema } from './payment-identifier';
import { address, shortString, uintString, x402V1Payload, x402V2Payload } from './primitives';
import type { ExactEvmPayloadBody } from './request-types';

/**
 * Request bodies of the standard x402 facilitator endpoints (`POST {facilitator}/verify` and
 * `/settle`), as the x402 middleware sends them: `{ x402Version, paymentPayload, paymentRequirements }`.
 * Version 1 (`x402`, `x402-express`, …) and version 2 (`@x402/core`, `@x402/express`, …) differ in the
 * requirements' amount field, the network naming and where the payload names its scheme and network.
 *
 * Only what the payment mechanisms read is constrained (the payload, composed from their schemas, and the
 * extensions they read); the many descriptive fields the middleware adds (resource, description, mimeType,
 * outputSchema, other extensions …) are accepted as they are.
 */

/** `extra` of exact EVM requirements: the EIP-712 domain name and version the payer signs with. */
const eip712Extra = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 256 },
    version: { type: 'string', maxLength: 64 },
  },
  additionalProperties: true,
} as const;

const maxTimeoutSeconds = { type: 'integer', minimum: 0, maximum: 31_536_000 } as const;

/** x402 v2 `PaymentRequirements`. */
const x402RequirementsV2Schema = {
  type: 'object',
  required: ['scheme', 'network', 'amount', 'asset', 'payTo'],
  properties: {
    scheme: shortString,
    network: { ...shortString, description: 'CAIP-2 network id, e.g. eip155:8453' },
    amount: { ...uintString, description: 'atomic amount' },
    asset: { ...address, description: 'token address' },
    payTo: { ...address, description: 'merchant address' },
    maxTimeoutSeconds,
    extra: eip712Extra,
  },
  additionalProperties: true,
} as const;

/** x402 v1 `PaymentRequirements`. */
const x402RequirementsV1Schema = {
  type: 'object',
  required: ['scheme', 'network', 'maxAmountRequired', 'asset', 'payTo'],
  properties: {
    scheme: shortString,
    network: { ...shortString, description: 'x402 v1 network name, e.g. base or base-sepolia' },
    maxAmountRequired: { ...uintString, description: 'atomic amount' },
    asset: { ...address, description: 'token address' },
    payTo: { ...address, description: 'merchant address' },
    maxTimeoutSeconds,
    extra: { anyOf: [eip712Extra, { type: 'null' }] },
  },
  additionalProperties: true,
} as const;

export const x402RequestV2Schema = {
  $id: 'X402FacilitatorRequestV2',
  title: 'x402 facilitator verify or settle request, x402Version 2',
  type: 'object',
  required: ['paymentPayload', 'paymentRequirements'],
  properties: {
    x402Version: { const: 2 },
    paymentPayload: {
      type: 'object',
      required: ['x402Version', 'accepted', 'payload'],
      properties: {
        x402Version: { const: 2 },
        accepted: x402RequirementsV2Schema,
        payload: x402V2Payload,
        extensions: paymentExtensionsSchema,
      },
      additionalProperties: true,
    },
    paymentRequirements: x402RequirementsV2Schema,
  },
  additionalProperties: true,
} as const;

export const x402RequestV1Schema = {
  $id: 'X402FacilitatorRequestV1',
  title: 'x402 facilitator verify or settle request, x402Version 1',
  type: 'object',
  required: ['paymentPayload', 'paymentRequirements'],
  properties: {
    x402Version: { const: 1 },
    paymentPayload: {
      type: 'object',
      required: ['x402Version', 'scheme', 'network', 'payload'],
      properties: {
        x402Version: { const: 1 },
        scheme: shortString,
        network: shortString,
        payload: x402V1Payload,
      },
      additionalProperties: true,
    },
    paymentRequirements: x402RequirementsV1Schema,
  },
  additionalProperties: true,
} as const;

export interface X402Eip712Extra {
  name?: string;
  version?: string;
  [extra: string]: unknown;
}

interface X402RequirementsV2Body {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds?: number;
  extra?: X402Eip712Extra;
  [extra: string]: unknown;
}

interface X402RequirementsV1Body {
  scheme: string;
  network: string;
  maxAmountRequired: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds?: number;
  extra?: X402Eip712Extra | null;
  [extra: string]: unknown;
}

interface X402RequestV2 {
  x402Version?: 2;
  paymentPayload: { x402Version: 2; accepted: X402RequirementsV2Body; payload: ExactEvmPayloadBody; extensions?: Record<string, unknown>; [extra: string]: unknown };
  paymentRequirements: X402RequirementsV2Body;
  [extra: string]: unknown;
}

interface X402RequestV1 {
  x402Version?: 1;
  paymentPayload: { x402Version: 1; scheme: string; network: string; payload: ExactEvmPayloadBody; [extra: string]: unknown };
  paymentRequirements: X402RequirementsV1Body;
  [extra: string]: unknown;
}

export const validateX402RequestV2 = compileValidator<X402RequestV2>(x402RequestV2Schema, 'x402 request (x402Version 2)');
export const validateX402RequestV1 = compileValidator<X402RequestV1>(x402RequestV1Schema, 'x402 request (x402Version 1)');
