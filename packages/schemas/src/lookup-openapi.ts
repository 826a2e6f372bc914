import type { PathItems } from './openapi';
import { settlementLookupQuerySchema } from './payment-identifier';

/** The public settlement lookup in the OpenAPI document (`buildOpenApiDocument({ extraPaths, extraSchemas })`). */
export const lookupOpenApiSchemas: Record<string, object> = {
  PublicSettlementRecord: {
    type: 'object',
    description: 'a settlement as a stranger may see it: only what the chain shows (no ids of ours, metadata, error messages or details)',
    required: ['type', 'status', 'network', 'transaction_hash', 'settled_at', 'details', 'finality'],
    properties: {
      type: { const: 'settlement' },
      status: { enum: ['pending', 'settled', 'failed'] },
      network: { type: 'string', description: 'CAIP-2 id' },
      transaction_hash: { type: ['string', 'null'], description: "the payer's transfer, once settled" },
      settled_at: { type: ['string', 'null'], format: 'date-time' },
      details: {
        type: 'object',
        required: ['destination_address', 'payer_address', 'nonce', 'amount', 'settled_amount', 'fee_collection_status', 'fee_tx_hash'],
        properties: {
          destination_address: { type: 'string', description: 'the merchant (payTo)' },
          payer_address: { type: 'string' },
          nonce: { type: 'string', description: "the authorization's nonce" },
          amount: { type: 'string', description: 'the payment, token units' },
          settled_amount: { type: 'string', description: 'the amount paid to the merchant: the payment once settled, else "0"' },
          fee_collection_status: { enum: ['collected', 'failed', 'pending', 'not_collected'] },
          fee_tx_hash: { type: ['string', 'null'], description: 'the mined fee transaction (the same as transaction_hash on the atomic path)' },
        },
      },
      finality: {
        type: ['object', 'null'],
        description: 'the reorg outcome once ended: watching until FINALITY_DEPTH deep, reorged while being mined again, final, or changed (the chain disagrees with what was reported)',
        properties: { status: { enum: ['watching', 'reorged', 'final', 'changed'] }, reorgs: { type: 'integer' } },
      },
      error: { type: 'object', description: 'failed only: its error code', properties: { code: { type: 'string' } } },
    },
  },
  SettlementLookup: {
    type: 'object',
    required: ['settlements'],
    properties: { settlements: { type: 'array', items: { $ref: '#/components/schemas/PublicSettlementRecord' }, maxItems: 20 } },
  },
};

const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json({ $ref: '#/components/schemas/ErrorEnvelope' }, description);
const { properties } = settlementLookupQuerySchema;
const queryParameter = (name: keyof typeof properties, description: string) => ({ name, in: 'query', required: name === 'network', description, schema: properties[name] });

export const lookupOpenApiPaths: PathItems = {
  '/v1/settlements/lookup': {
    get: {
      operationId: 'lookupSettlement',
      summary: 'Did it settle? Public lookup by payment identifier, by transaction, or by payer and nonce',
      description:
        'Needs no id of ours and no key: give `network` and exactly one of `payment_id` (the x402 payment-identifier), `transaction` (the settlement transaction; a batch transaction answers every settlement in it), or `payer` with `nonce` (the authorization). Answers every settlement the key names, newest first (a payment retried after a failure has several), each with only what the chain shows. Rate-limited like verify and settle.',
      security: [{}],
      parameters: [
        queryParameter('network', 'CAIP-2 id, e.g. eip155:8453'),
        queryParameter('payment_id', 'the x402 payment-identifier given with the payment'),
        queryParameter('transaction', 'the settlement transaction hash'),
        queryParameter('payer', "the authorization's payer (with nonce)"),
        queryParameter('nonce', "the authorization's nonce (with payer)"),
      ],
      responses: {
        '200': json({ $ref: '#/components/schemas/SettlementLookup' }, 'the settlements the key names'),
        '400': error('invalid_request (bad hex, a wrong length, no key or several) or unsupported_network'),
        '404': error('not_found: no settlement for this key (none was started)'),
        '429': error('rate_limited'),
      },
    },
  },
};
