import { registeredMechanisms } from '@facilitator/payment-mechanisms';
import * as responses from './responses';
import { settleFormASchema, verifyFormASchema } from './verify-form-a';
import { settleFormBSchema, verifyFormBSchema } from './verify-form-b';

/**
 * The OpenAPI 3.1 document, built from the same schemas that validate requests (OpenAPI 3.1 schemas
 * are JSON Schema, so they are used as they are, less their ajv `$id`).
 */
type Schema = Record<string, unknown>;

const component = (schema: object): Schema => {
  const { $id: _id, ...rest } = schema as Schema;
  return rest;
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('ErrorEnvelope'), description);

const idParam = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string', maxLength: 64 } });
// status records: open unless API keys are configured; a merchant's settle key reads its own
const apiKeyOrSettleKey = [{}, { apiKey: [] }, { settleKey: [] }];
// webhook deliveries are never open
const operatorOrMerchant = [{ apiKey: [] }, { settleKey: [] }];
// operator routes: an API_KEYS key, refused when API_KEYS is unset
const operatorOnly = [{ apiKey: [] }];

/** The payment mechanisms the engine speaks, by id (the registry's, in its order): what the description lists. */
const mechanismIds = () =>
  registeredMechanisms()
    .map((m) => m.id)
    .join(', ');

/** Extra path items contributed by other surfaces (e.g. the x402 facilitator routes). */
export type PathItems = Record<string, Record<string, unknown>>;

export function buildOpenApiDocument(options: { version?: string; extraPaths?: PathItems; extraSchemas?: Record<string, object> } = {}) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'x402 payment facilitator',
      version: options.version ?? '1.0.0',
      description: `Verifies x402 payments signed by the payer (EIP-712; mechanisms: ${mechanismIds()}) for USDC on Base and settles them: a flat fee is collected from the merchant first, then the payer-to-merchant transfer runs on chain. Errors use the envelope \`{ "error": { "code", "message", "details"? } }\`.`,
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'required for status queries when the operator configured API keys' },
        settleKey: { type: 'http', scheme: 'bearer', description: "a merchant's settle key: needed to settle payments to a merchant with settle protection on; reads that merchant's own records" },
        merchantSession: { type: 'http', scheme: 'bearer', description: 'a merchant page session token (POST /v1/merchants/{address}/session): reads that merchant\'s own records for 30 minutes' },
      },
      schemas: {
        VerifyRequestFormA: component(verifyFormASchema),
        VerifyRequestFormB: component(verifyFormBSchema),
        SettleRequestFormA: component(settleFormASchema),
        SettleRequestFormB: component(settleFormBSchema),
        ErrorEnvelope: responses.errorEnvelopeSchema,
        VerificationResultFormA: responses.verificationResultFormASchema,
        VerificationResultFormB: responses.verificationResultFormBSchema,
        SettlementResultFormA: responses.settlementResultFormASchema,
        SettlementCreatedFormB: responses.settlementCreatedFormBSchema,
        StatusRecord: responses.statusRecordSchema,
        WebhookDeliveries: responses.webhookDeliveriesSchema,
        Queues: responses.queuesSchema,
        ...Object.fromEntries(Object.entries(options.extraSchemas ?? {}).map(([name, schema]) => [name, component(schema)])),
      },
    },
    paths: {
      '/v1/verify': {
        post: {
          operationId: 'verify',
          summary: 'Verify a payment (free)',
          parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }],
          requestBody: { required: true, content: { 'application/json': { schema: { oneOf: [ref('VerifyRequestFormA'), ref('VerifyRequestFormB')] } } } },
          responses: {
            '200': json({ oneOf: [ref('VerificationResultFormA'), ref('VerificationResultFormB')] }, 'verified'),
            '400': error('invalid_request, unsupported_network or verification_failed'),
            '409': error('idempotency_key_in_flight, or payment_identifier_conflict: the payment-identifier in `payment.extensions` is bound to another payment to this merchant'),
            '413': error('payload_too_large'),
            '422': error('idempotency_key_reused'),
            '503': error('service_unavailable: a dependency (chain RPC, database) did not answer'),
          },
        },
      },
      '/v1/settle': {
        post: {
          operationId: 'settle',
          summary: 'Settle a verified payment: fee first, then the transfer',
          requestBody: { required: true, content: { 'application/json': { schema: { oneOf: [ref('SettleRequestFormA'), ref('SettleRequestFormB')] } } } },
          responses: {
            '200': json({ oneOf: [ref('SettlementResultFormA'), ref('SettlementCreatedFormB')] }, 'Form A: settled; Form B: created (pending)'),
            '202': json(ref('SettlementResultFormA'), 'Form A: still in progress; poll the status record'),
            '400': error('insufficient_allowance, fee_collection_failed, settlement_failed, invalid_request, or verification_failed (amount below the minimum in force now)'),
            '401': error('unauthorized: the merchant turned settle protection on, and no valid settle key was sent (Authorization: Bearer)'),
            '404': error('not_found: no verification for this payment'),
            '409': error('payment_conflict: the payer signed another authorization with the same nonce, which is being settled or was settled; only one of them can ever be paid; or payment_identifier_conflict: the payment-identifier in `payment.extensions` is bound to another payment to this merchant'),
            '503': error('service_unavailable'),
          },
        },
      },
      '/v1/verifications/{verification_id}': {
        get: {
          operationId: 'getVerification',
          security: apiKeyOrSettleKey,
          parameters: [idParam('verification_id', 'ver_… id')],
          responses: { '200': json(ref('StatusRecord'), 'the status record'), '401': error('unauthorized'), '404': error('not_found') },
        },
      },
      '/v1/settlements/{settlement_id}': {
        get: {
          operationId: 'getSettlement',
          security: apiKeyOrSettleKey,
          parameters: [idParam('settlement_id', 'stl_… id')],
          responses: { '200': json(ref('StatusRecord'), 'the status record'), '401': error('unauthorized'), '404': error('not_found') },
        },
      },
      '/v1/webhooks/deliveries': {
        get: {
          operationId: 'listWebhookDeliveries',
          security: operatorOrMerchant,
          parameters: [
            { name: 'verification_id', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'settlement_id', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: { '200': json(ref('WebhookDeliveries'), 'deliveries with their attempts'), '400': error('invalid_request'), '401': error('unauthorized') },
        },
      },
      '/v1/webhooks/deliveries/{delivery_id}/redeliver': {
        post: {
          operationId: 'redeliverWebhook',
          security: operatorOrMerchant,
          parameters: [idParam('delivery_id', 'evt_… id (the event id)')],
          responses: { '202': json({ type: 'object' }, 'a new round of attempts started, same event_id'), '400': error('not a failed delivery'), '401': error('unauthorized'), '404': error('not_found') },
        },
      },
      '/v1/queues': {
        // an operator route: it lists parked settlements with their internal reasons; refused (401) when API_KEYS is unset
        get: { operationId: 'getQueues', security: operatorOnly, responses: { '200': json(ref('Queues'), 'jobs per state for each queue'), '401': error('unauthorized, or API_KEYS not configured') } },
      },
      '/healthz': { get: { operationId: 'health', responses: { '200': json({ type: 'object' }, 'the process is alive') } } },
      '/readyz': {
        get: { operationId: 'ready', responses: { '200': json({ type: 'object' }, 'Postgres, Redis and every RPC answer'), '503': json({ type: 'object' }, 'names the dependency that failed') } },
      },
      '/metrics': { get: { operationId: 'metrics', responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } } } },
      '/openapi.json': { get: { operationId: 'openapi', responses: { '200': json({ type: 'object' }, 'this document') } } },
      '/docs': { get: { operationId: 'docs', responses: { '200': { description: 'rendered API reference (HTML)', content: { 'text/html': { schema: { type: 'string' } } } } } } },
      '/admin/queues': {
        get: { operationId: 'queueDashboard', summary: 'Bull Board (HTTP basic auth)', responses: { '200': { description: 'dashboard (HTML)' }, '401': error('unauthorized'), '404': error('dashboard off') } },
      },
      ...options.extraPaths,
    },
  };
}
