import { settlementWaitReasonList } from '@facilitator/core';
import type { FromSchema } from 'json-schema-to-ts';
import type { PathItems } from './openapi';

// The public status page's JSON (GET /status.json): aggregates of the service's own records and this API
// process's view of its RPC endpoints. No address, id or secret appears in it.

const ms = { type: ['number', 'null'], description: 'milliseconds; null when nothing happened in the window' } as const;

const latency = {
  type: 'object',
  additionalProperties: false,
  required: ['count', 'p50_ms', 'p95_ms'],
  properties: { count: { type: 'integer', minimum: 0 }, p50_ms: ms, p95_ms: ms },
} as const;

const settleWindow = {
  type: 'object',
  additionalProperties: false,
  required: ['settled', 'failed', 'success_rate', 'p50_ms', 'p95_ms'],
  properties: {
    settled: { type: 'integer', minimum: 0, description: 'settlements that reached settled in the window' },
    failed: { type: 'integer', minimum: 0, description: 'settlements that failed in the window' },
    success_rate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'settled / (settled + failed); null when neither happened' },
    p50_ms: ms,
    p95_ms: ms,
  },
} as const;

const byWindow = <S extends object>(schema: S) =>
  ({ type: 'object', additionalProperties: false, required: ['5m', '1h', '24h'], properties: { '5m': schema, '1h': schema, '24h': schema } }) as const;

const networkStatus = {
  type: 'object',
  additionalProperties: false,
  required: ['network', 'name', 'chain_id', 'verify', 'settle', 'waiting', 'rpc', 'fee'],
  properties: {
    network: { type: 'string', description: 'CAIP-2 id, e.g. eip155:8453' },
    name: { type: 'string' },
    chain_id: { type: 'integer' },
    verify: { ...byWindow(latency), description: 'verify latency: from the start of the checks to the record being stored' },
    settle: { ...byWindow(settleWindow), description: 'settle latency: from the settle request to settled' },
    waiting: {
      type: 'object',
      additionalProperties: false,
      required: ['total', 'by_reason'],
      properties: {
        total: { type: 'integer', minimum: 0 },
        by_reason: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['reason', 'count', 'oldest_since'],
            properties: {
              reason: { type: 'string', description: settlementWaitReasonList() },
              count: { type: 'integer', minimum: 1 },
              oldest_since: { type: ['string', 'null'], format: 'date-time' },
            },
          },
        },
      },
    },
    rpc: {
      type: 'object',
      additionalProperties: false,
      required: ['up', 'total', 'endpoints'],
      description: "this API process's view of the network's RPC endpoints (named by position, never by URL)",
      properties: {
        up: { type: 'integer', minimum: 0 },
        total: { type: 'integer', minimum: 0 },
        endpoints: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['endpoint', 'up', 'latency_ms', 'answered', 'failed'],
            properties: {
              endpoint: { type: 'string' },
              up: { type: 'boolean' },
              latency_ms: { type: 'number' },
              answered: { type: 'integer', minimum: 0 },
              failed: { type: 'integer', minimum: 0 },
            },
          },
        },
      },
    },
    fee: {
      type: 'object',
      additionalProperties: false,
      required: ['facilitator_fee_units', 'base_fee_per_gas_wei', 'max_fee_per_gas_cap_wei', 'gas_above_cap'],
      properties: {
        facilitator_fee_units: { type: 'string', description: 'the flat fee per settlement, in token units (USDC: 6 decimals)' },
        base_fee_per_gas_wei: { type: ['string', 'null'], description: "the latest block's base fee; null when no endpoint answered" },
        max_fee_per_gas_cap_wei: { type: 'string', description: 'MAX_FEE_PER_GAS_GWEI_<chainId>: settlements wait while the base fee is above it' },
        gas_above_cap: { type: ['boolean', 'null'] },
      },
    },
  },
} as const;

export const serviceStatusSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['computed_at', 'max_age_seconds', 'windows', 'window_max_age_seconds', 'networks'],
  properties: {
    computed_at: { type: 'string', format: 'date-time', description: 'when these figures were computed (one computation serves every visitor)' },
    max_age_seconds: { type: 'number', description: 'how long a computation is served before the next' },
    windows: { type: 'array', items: { type: 'string', enum: ['5m', '1h', '24h'] } },
    window_max_age_seconds: {
      ...byWindow({ type: 'number' } as const),
      description: 'how old each window\'s figures may be: the hour and the day are recomputed less often (their queries read up to a day of rows)',
    },
    networks: { type: 'array', items: networkStatus },
  },
} as const;

export type ServiceStatus = FromSchema<typeof serviceStatusSchema>;
export type NetworkStatus = ServiceStatus['networks'][number];

export const serviceStatusOpenApiSchemas: Record<string, object> = { ServiceStatus: serviceStatusSchema };

export const serviceStatusOpenApiPaths: PathItems = {
  '/status.json': {
    get: {
      operationId: 'getServiceStatus',
      summary: 'Live service status per network: latency, success rate, waiting settlements, RPC health, fees (public, cached)',
      tags: ['status'],
      responses: { '200': { description: 'the status', content: { 'application/json': { schema: { $ref: '#/components/schemas/ServiceStatus' } } } } },
    },
  },
  '/status': {
    get: {
      operationId: 'serviceStatusPage',
      summary: 'The status page (HTML; polls /status.json)',
      tags: ['status'],
      responses: { '200': { description: 'the page', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
};
