import { paymentExtensionsSchema } from './payment-identifier';
import { address, exactEvmPayload, shortString } from './primitives';

/** Spec "Requirements". `price` or an atomic amount (`amount` as x402 v2, `maxAmountRequired` as v1). */
export const requirementsSchema = {
  type: 'object',
  required: ['scheme', 'network', 'payTo'],
  properties: {
    scheme: { const: 'exact' },
    price: {
      type: 'string',
      maxLength: 100,
      description: '"$" followed by a decimal number (e.g. "$0.01"), or an atomic amount',
    },
    amount: { type: 'string', pattern: '^(0|[1-9][0-9]{0,77})$', description: 'atomic amount (x402 v2 name)' },
    maxAmountRequired: { type: 'string', pattern: '^(0|[1-9][0-9]{0,77})$', description: 'atomic amount (x402 v1 name)' },
    network: { ...shortString, description: 'CAIP-2 network id, e.g. eip155:8453' },
    payTo: { ...address, description: 'merchant address' },
    token: { ...address, description: 'token address; checked when present' },
    asset: { ...address, description: 'token address (x402 name); same rule as token' },
  },
  anyOf: [{ required: ['price'] }, { required: ['amount'] }, { required: ['maxAmountRequired'] }],
  additionalProperties: true,
} as const;

/** Spec "Payment" (Form A, x402Version 2). */
const paymentSchema = {
  type: 'object',
  required: ['x402Version', 'payload'],
  properties: {
    x402Version: { const: 2 },
    scheme: { const: 'exact' },
    network: shortString,
    payload: exactEvmPayload,
    /** x402 extensions, as in an x402 v2 payment payload: `payment-identifier` is read */
    extensions: paymentExtensionsSchema,
  },
  additionalProperties: true,
} as const;

export const verifyFormASchema = {
  $id: 'VerifyRequestFormA',
  title: 'Verify or settle request, Form A (x402Version 2)',
  type: 'object',
  required: ['payment', 'requirements'],
  properties: { payment: paymentSchema, requirements: requirementsSchema },
  additionalProperties: false,
} as const;

/** Settle Form A takes the very same objects as verify. */
export const settleFormASchema = { ...verifyFormASchema, $id: 'SettleRequestFormA' } as const;
