import { PAYMENT_ID_MAX_LENGTH, PAYMENT_ID_MIN_LENGTH, PAYMENT_ID_PATTERN, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { address, bytes32, shortString, uintString } from './primitives';

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

/** x402's `eip2612GasSponsoring` extension key (`@x402/extensions`' `EIP2612_GAS_SPONSORING.key`). */
export const EIP2612_GAS_SPONSORING = 'eip2612GasSponsoring';

/**
 * `eip2612GasSponsoring.info`: the payer's EIP-2612 permit letting Permit2 move the token, which the
 * facilitator submits with a Permit2 payment (`@x402/extensions`' schema, every field bounded). The server's
 * declaration, echoed by a client that signed none (`{ description, version }`), is no permit; a permit has
 * all its fields.
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

/**
 * `extensions` of a payment (x402 v2 `paymentPayload.extensions`, /v1 Form A `payment.extensions`).
 * `payment-identifier` is read, and `eip2612GasSponsoring` (the payer's permit for Permit2, read by the
 * Permit2 mechanisms on x402 v2); other extensions, and the schema the client echoes, pass as they are.
 */
export const paymentExtensionsSchema = {
  type: 'object',
  properties: {
    [EIP2612_GAS_SPONSORING]: {
      type: 'object',
      properties: { info: eip2612GasSponsoringInfo },
      additionalProperties: true,
    },
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
