import { PAYMENT_ID_MAX_LENGTH, PAYMENT_ID_MIN_LENGTH, PAYMENT_ID_PATTERN, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { mechanismExtensionSchemas } from './mechanism-payloads';
import { address, bytes32, shortString } from './primitives';

/**
 * The x402 `payment-identifier` extension (`@x402/extensions`): a client-chosen id of one payment, which a
 * facilitator may use as an idempotency key (docs/decisions.md, "Payment identifiers"). Its limits are the
 * extension's own constants, so our schema cannot drift from what its clients generate.
 */
export { PAYMENT_IDENTIFIER };

const paymentId = {
  type: 'string',
  minLength: PAYMENT_ID_MIN_LENGTH,
  maxLength: PAYMENT_ID_MAX_LENGTH,
  pattern: PAYMENT_ID_PATTERN.source,
  description: `payment identifier: ${PAYMENT_ID_MIN_LENGTH}-${PAYMENT_ID_MAX_LENGTH} letters, digits, "-" or "_"`,
} as const;

/**
 * `extensions` of a payment (x402 v2 `paymentPayload.extensions`, /v1 Form A `payment.extensions`).
 * `payment-identifier` is read, and those the payment mechanisms read (`PaymentMechanism.x402.extensions`, such as a
 * payer's approval permit), each with its mechanism's schema; other extensions, and
 * the schema the client echoes, pass as they are.
 */
export const paymentExtensionsSchema = {
  type: 'object',
  properties: {
    ...(mechanismExtensionSchemas() as Record<string, { type: 'object' }>),
    [PAYMENT_IDENTIFIER]: {
      type: 'object',
      properties: {
        info: {
          type: 'object',
          properties: { required: { type: 'boolean' }, id: paymentId },
          additionalProperties: true,
        },
      },
      additionalProperties: true,
    },
  },
  additionalProperties: true,
} as const;

/** The id a payment's extensions carry, if any (the body was validated against paymentExtensionsSchema). */
export function paymentIdOf(extensions: unknown): string | undefined {
  const extension = (extensions as Record<string, { info?: { id?: unknown } } | undefined> | undefined)?.[PAYMENT_IDENTIFIER];
  const id = extension?.info?.id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * GET /v1/settlements/lookup: a network and exactly one key — a payment identifier, the settlement's
 * transaction, or the authorization's payer and nonce (docs/decisions.md, "Public settlement lookup").
 */
export const settlementLookupQuerySchema = {
  $id: 'SettlementLookupQuery',
  type: 'object',
  required: ['network'],
  properties: {
    network: { ...shortString, description: 'CAIP-2 network id, e.g. eip155:8453' },
    payment_id: paymentId,
    transaction: { ...bytes32, description: "the settlement's transaction hash (32 bytes, 0x hex)" },
    payer: { ...address, description: "the authorization's payer (`from`)" },
    nonce: { ...bytes32, description: "the authorization's nonce" },
  },
  additionalProperties: false,
  oneOf: [{ required: ['payment_id'] }, { required: ['transaction'] }, { required: ['payer', 'nonce'] }],
  description: 'give network and exactly one key: payment_id, transaction, or payer with nonce',
} as const;

export interface SettlementLookupQuery {
  network: string;
  payment_id?: string;
  transaction?: string;
  payer?: string;
  nonce?: string;
}
