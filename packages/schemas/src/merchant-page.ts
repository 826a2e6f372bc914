import { compileValidator } from './validator';

/**
 * The merchant page's reads (`/v1/merchants/{address}/…` with `Authorization: Bearer <session token>`):
 * their query strings and their answers. Pages are newest first and bounded; `before` is the opaque
 * cursor of the previous page's `next_before`.
 */
const MERCHANT_PAGE_MAX_LIMIT = 100;
export const MERCHANT_PAGE_DEFAULT_LIMIT = 20;

export const merchantPageQuerySchema = {
  $id: 'MerchantPageQuery',
  type: 'object',
  properties: {
    limit: { type: 'string', pattern: '^([1-9][0-9]?|100)$', description: `rows per page, 1 to ${MERCHANT_PAGE_MAX_LIMIT} (default ${MERCHANT_PAGE_DEFAULT_LIMIT})` },
    before: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,200}$', description: 'the previous page\'s next_before: this page starts after it' },
  },
  additionalProperties: false,
} as const;

interface MerchantPageQuery {
  limit?: string;
  before?: string;
}

export const validateMerchantPageQuery = compileValidator<MerchantPageQuery>(merchantPageQuerySchema, 'page query');

const amount = { type: 'string', pattern: '^[0-9]+$', description: 'token units (USDC: 6 decimals)' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const nextBefore = { type: ['string', 'null'], description: 'give as `before` for the next (older) page; null: this was the last' } as const;

export const merchantSessionSchema = {
  title: 'Merchant page session',
  type: 'object',
  required: ['merchant', 'session_token', 'expires_at'],
  properties: {
    merchant: { type: 'string' },
    session_token: { type: 'string', description: 'send as Authorization: Bearer <token> on the merchant page reads; shown once, good until expires_at or sign-out' },
    expires_at: time,
  },
} as const;

export const merchantAccountSchema = {
  title: 'Merchant account',
  type: 'object',
  required: ['merchant', 'treasury', 'fees_paid', 'settlements_with_fee', 'networks'],
  properties: {
    merchant: { type: 'string' },
    treasury: { type: 'string', description: 'the address the fee allowance is granted to' },
    fees_paid: { ...amount, description: 'the sum of the fees collected from this merchant, in token units' },
    settlements_with_fee: { type: 'integer', description: 'how many settlements collected a fee' },
    networks: {
      type: 'array',
      items: {
        type: 'object',
        required: ['network', 'token', 'fee', 'allowance', 'balance', 'settlements_covered', 'read_at'],
        properties: {
          network: { type: 'string', description: 'CAIP-2' },
          token: { type: 'string' },
          fee: amount,
          allowance: { ...amount, description: 'the merchant\'s allowance to the treasury, read from the chain' },
          balance: { ...amount, description: 'the merchant\'s token balance, read from the chain' },
          settlements_covered: { type: 'string', pattern: '^[0-9]+$', description: 'how many more fees min(allowance, balance) pays for' },
          read_at: { ...time, description: 'when the chain was read (readings are reused for a few seconds)' },
        },
      },
    },
  },
} as const;

const merchantSettlementSchema = {
  type: 'object',
  required: ['id', 'created_at', 'network', 'payer', 'amount', 'fee', 'fee_collected', 'state', 'settlement_tx_hash', 'fee_tx_hash'],
  properties: {
    id: { type: 'string' },
    created_at: time,
    network: { type: 'string' },
    payer: { type: 'string' },
    amount,
    fee: amount,
    fee_collected: { type: 'boolean', description: 'whether the fee was taken from the merchant' },
    state: { type: 'string' },
    settlement_tx_hash: nullableString,
    fee_tx_hash: nullableString,
  },
} as const;

export const merchantSettlementPageSchema = {
  title: 'Merchant settlements',
  type: 'object',
  required: ['settlements', 'next_before'],
  properties: { settlements: { type: 'array', items: merchantSettlementSchema }, next_before: nextBefore },
} as const;

export const merchantDeliveryPageSchema = {
  title: 'Merchant webhook deliveries',
  type: 'object',
  required: ['deliveries', 'next_before'],
  properties: {
    deliveries: { type: 'array', items: { type: 'object', description: 'as GET /v1/webhooks/deliveries: the event, its URL, status and every attempt' } },
    next_before: nextBefore,
  },
} as const;
