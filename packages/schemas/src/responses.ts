import { SETTLEMENT_WAIT_REASONS, SETTLEMENT_WAIT_REASON_TEXT, settlementWaitReasonList } from '@facilitator/core';
import { address } from './primitives';

/** "a (what a means), b (…) or c (…)": the wait reasons with their meanings, from core's one list. */
const waitReasonsExplained = settlementWaitReasonList((r) => `${r} (${SETTLEMENT_WAIT_REASON_TEXT[r].meaning})`);

/**
 * Response shapes, for the OpenAPI document (and for tests that check answers against it). Requests
 * are validated with the request schemas; these describe what we send back.
 */
const isoTime = { type: 'string', format: 'date-time' } as const;
const hash = { type: 'string', pattern: '^0x[0-9a-f]{64}$' } as const;
const lowerAddress = { ...address, pattern: '^0x[0-9a-f]{40}$' } as const;
const uint = { type: 'string', pattern: '^[0-9]+$' } as const;
const nullable = <T extends object>(schema: T) => ({ anyOf: [schema, { type: 'null' }] });

export const errorEnvelopeSchema = {
  title: 'Error envelope',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', examples: ['verification_failed'] },
        message: { type: 'string' },
        details: { type: 'object' },
      },
    },
  },
} as const;

export const verificationResultFormASchema = {
  title: 'Verification result (Form A)',
  type: 'object',
  required: ['isValid', 'message', 'details'],
  properties: {
    isValid: { const: true },
    message: { type: 'string' },
    details: {
      type: 'object',
      required: ['verification_id', 'verified_amount', 'verified_token', 'merchant_address', 'payer_address', 'verified_at'],
      properties: {
        verification_id: { type: 'string' },
        verified_amount: uint,
        verified_token: lowerAddress,
        merchant_address: lowerAddress,
        payer_address: lowerAddress,
        verified_at: isoTime,
      },
    },
  },
} as const;

export const verificationResultFormBSchema = {
  title: 'Verification result (Form B)',
  type: 'object',
  required: ['verification_id', 'status', 'transaction_hash', 'chain', 'verified_amount', 'verified_token', 'seller_address', 'verified_at'],
  properties: {
    verification_id: { type: 'string' },
    status: { const: 'verified' },
    transaction_hash: hash,
    chain: { type: 'string' },
    verified_amount: uint,
    verified_token: lowerAddress,
    seller_address: lowerAddress,
    verified_at: isoTime,
  },
} as const;

export const settlementResultFormASchema = {
  title: 'Settlement result (Form A)',
  type: 'object',
  required: ['success', 'transaction', 'message', 'details'],
  properties: {
    success: { type: 'boolean' },
    transaction: { type: 'null' },
    message: { type: 'string' },
    details: {
      type: 'object',
      properties: {
        settlement_id: { type: 'string' },
        verification_id: { type: 'string' },
        settled_amount: uint,
        merchant_received: { type: 'number' },
        fee_amount_wei: { type: 'number' },
        fee_collection_status: {
          enum: ['collected', 'failed', 'not_collected'],
          description: 'not_collected: the payment was executed to the merchant by a transaction that was not ours (settlement_tx_hash), so no fee was taken',
        },
        fee_tx_hash: nullable(hash),
        settlement_tx_hash: hash,
        fee_collected_first: { type: 'boolean', description: 'true whenever a fee was collected; false only with not_collected' },
        pricing_model: { const: 'flat_rate' },
        description: { type: 'string' },
        fee_collection_timestamp: isoTime,
        settlement_timestamp: isoTime,
        status: { const: 'pending', description: 'only in the 202 answer' },
        state: { type: 'string', description: 'only in the 202 answer' },
      },
    },
  },
} as const;

export const settlementCreatedFormBSchema = {
  title: 'Settlement result (Form B)',
  type: 'object',
  required: ['settlement_id', 'verification_id', 'status', 'transaction_hash', 'destination_address', 'created_at'],
  properties: {
    settlement_id: { type: 'string' },
    verification_id: { type: 'string' },
    status: { enum: ['pending', 'settled', 'failed'] },
    transaction_hash: nullable(hash),
    destination_address: lowerAddress,
    created_at: isoTime,
  },
} as const;

export const statusRecordSchema = {
  title: 'Status record',
  type: 'object',
  required: ['id', 'type', 'status', 'created_at', 'updated_at', 'transaction_hash', 'details'],
  properties: {
    id: { type: 'string' },
    type: { enum: ['verification', 'settlement'] },
    status: { enum: ['verified', 'pending', 'settled', 'failed', 'rejected'] },
    state: { type: 'string', description: 'settlements: the processing state' },
    created_at: isoTime,
    updated_at: isoTime,
    settled_at: nullable(isoTime),
    transaction_hash: nullable(hash),
    chain: { type: 'string', description: 'verifications only' },
    details: { type: 'object' },
    error: { type: 'object', description: 'settlements that failed: code, message, details' },
    finality: {
      type: ['object', 'null'],
      description:
        'settlements that ended: their mined transactions are watched for reorgs until FINALITY_DEPTH_<chainId> blocks deep — status watching, reorged (one was removed by a reorg and is being mined again), final, or changed (after a reorg the chain\'s outcome differs from what was reported; a settlement.reorged event says what changed) — and reorgs, how many were seen; null before the end',
      properties: { status: { enum: ['watching', 'reorged', 'final', 'changed'] }, reorgs: { type: 'integer' } },
    },
    waiting: {
      type: ['object', 'null'],
      description:
        `settlements only: set while the settlement waits in its state for the chain instead of failing — reason ${waitReasonsExplained} — with since and details; null otherwise`,
      properties: {
        reason: { enum: SETTLEMENT_WAIT_REASONS },
        since: isoTime,
        details: { type: 'object' },
      },
    },
  },
} as const;

export const webhookDeliveriesSchema = {
  title: 'Webhook deliveries',
  type: 'object',
  required: ['deliveries'],
  properties: { deliveries: { type: 'array', items: { type: 'object' } } },
} as const;

export const queuesSchema = {
  title: 'Queue state',
  type: 'object',
  required: ['queues', 'at'],
  properties: {
    queues: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'counts', 'oldest_waiting_age_seconds'],
        properties: {
          name: { type: 'string' },
          counts: { type: 'object', additionalProperties: { type: 'integer' } },
          oldest_waiting_age_seconds: nullable({ type: 'number' }),
        },
      },
    },
    at: isoTime,
  },
} as const;
